import { openSqliteRouteStore, type RouteStore } from '../../../src/routing';

/** Trace links in the route store (src/routing/trace-links.ts), on the embedded backend. */

let store: RouteStore;
beforeEach(() => {
  store = openSqliteRouteStore(':memory:');
});
afterEach(() => store.close());

const TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const RETRY = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01';

describe('trace links', () => {
  it('keeps the latest traceparent of each request and finds those that have one', async () => {
    const links = store.traceLinks!;
    await links.save('req-1', TRACE, 1_000);
    await links.save('req-1', RETRY, 1_500);
    await links.save('req-2', TRACE, 2_000);
    expect(await links.find(['req-1', 'req-2', 'req-3', 'req-1'])).toEqual(
      new Map([
        ['req-1', RETRY],
        ['req-2', TRACE],
      ]),
    );
    expect(await links.find([])).toEqual(new Map());
  });

  it('stores only W3C traceparent text', async () => {
    await store.traceLinks!.save('req-1', 'not-a-traceparent', 1_000);
    expect(await store.traceLinks!.find(['req-1'])).toEqual(new Map());
  });

  it('purges the links made before a time', async () => {
    await store.traceLinks!.save('req-old', TRACE, 1_000);
    await store.traceLinks!.save('req-new', TRACE, 5_000);
    expect(await store.traceLinks!.purge(2_000)).toBe(1);
    expect([...(await store.traceLinks!.find(['req-old', 'req-new'])).keys()]).toEqual(['req-new']);
  });
});
