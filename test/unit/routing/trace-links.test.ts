import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresRouteStore, openSqliteRouteStore, type RouteStore } from '../../../src/routing';
import { startTestPostgres, type TestPostgres } from '../../helpers/postgres';

/** Trace links in the route store (src/routing/trace-links.ts), on both backends. */

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
}, 120_000);
afterAll(() => postgres?.close());

const backends: [string, () => RouteStore][] = [
  ['sqlite', () => openSqliteRouteStore(join(mkdtempSync(join(tmpdir(), 'trace-links-')), 'routes.sqlite'))],
  ['postgres', () => openPostgresRouteStore(postgres.url)],
];

const TRACE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const RETRY = '00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01';
let n = 0;
const id = (prefix: string) => `${prefix}-${process.pid}-${(n += 1)}`;

describe.each(backends)('trace links on %s', (_name, open) => {
  let store: RouteStore;
  beforeEach(() => {
    store = open();
  });
  afterEach(() => store.close());

  it('keeps the latest traceparent of each request and finds those that have one', async () => {
    const [one, two, none] = [id('req'), id('req'), id('req')];
    const links = store.traceLinks!;
    await links.save(one, TRACE, 1_000);
    await links.save(one, RETRY, 1_500);
    await links.save(two, TRACE, 2_000);
    expect(await links.find([one, two, none, one])).toEqual(
      new Map([
        [one, RETRY],
        [two, TRACE],
      ]),
    );
    expect(await links.find([])).toEqual(new Map());
  });

  it('stores only W3C traceparent text', async () => {
    const request = id('req');
    await store.traceLinks!.save(request, 'not-a-traceparent', 1_000);
    expect(await store.traceLinks!.find([request])).toEqual(new Map());
  });

  it('purges the links made before a time', async () => {
    const [old, recent] = [id('req-old'), id('req-new')];
    await store.traceLinks!.save(old, TRACE, 10);
    await store.traceLinks!.save(recent, TRACE, 5_000_000);
    expect(await store.traceLinks!.purge(20)).toBeGreaterThanOrEqual(1);
    expect([...(await store.traceLinks!.find([old, recent])).keys()]).toEqual([recent]);
  });
});
