import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  INBOX_STATE,
  PREPARED_STATE,
  openPostgresRouteStore,
  openSqliteRouteStore,
  RouteStoreUnavailableError,
  type RouteStore,
} from '../../../src/routing';
import { startTestPostgres, type TestPostgres } from '../../helpers/postgres';

/**
 * Both backends of the route store behind one set of checks: SQLite in a temporary file, PostgreSQL
 * on a throwaway server (initdb/pg_ctl, as `npm run cluster` starts it).
 */

let postgres: TestPostgres;
const opened: RouteStore[] = [];

beforeAll(async () => {
  postgres = await startTestPostgres();
}, 120_000);

afterAll(async () => {
  for (const store of opened) await store.close();
  postgres?.close();
});

const backends: [string, () => RouteStore][] = [
  ['sqlite', () => openSqliteRouteStore(join(mkdtempSync(join(tmpdir(), 'route-store-')), 'routes.sqlite'))],
  ['postgres', () => openPostgresRouteStore(postgres.url)],
];

let n = 0;
const id = (prefix: string) => `${prefix}-${process.pid}-${(n += 1)}-${Math.random().toString(36).slice(2)}`;
const entry = (requestId: string, eventId = id('evt')) => ({
  eventId,
  requestId,
  body: JSON.stringify({ event_id: eventId, request_id: requestId }),
});

describe.each(backends)('route store on %s', (_name, open) => {
  let store: RouteStore;
  beforeAll(() => {
    store = open();
    opened.push(store);
  });

  it('appends once per event_id and counts only new rows', async () => {
    const req = id('req');
    const first = entry(req);
    expect(await store.append([first, entry(req)], 1_000)).toBe(2);
    expect(await store.append([first], 2_000)).toBe(0);
  });

  it('a subscribe takes what arrived before it, in order, and again on a retry', async () => {
    const req = id('req');
    const early = [entry(req), entry(req)];
    await store.append(early, 1_000);
    const subscription = { requestId: req, workflowId: 'wf-1', signalName: 'jobEvent' };
    expect(await store.subscribe(subscription, 2_000)).toEqual(early.map((e) => e.body));
    expect(await store.subscribe(subscription, 2_001)).toEqual(early.map((e) => e.body));
  });

  it('claims due deliveries with their subscription, leases them, and marks them forwarded', async () => {
    const req = id('req');
    await store.subscribe({ requestId: req, workflowId: 'wf-2', signalName: 'custom', stepKey: 'step-a' }, 1_000);
    const later = entry(req);
    await store.append([later], 5_000);
    const claimed = (await store.claim(10_000, 5_000, 10_000)).filter((c) => c.requestId === req);
    expect(claimed).toEqual([
      expect.objectContaining({
        eventId: later.eventId,
        body: later.body,
        subscription: { requestId: req, workflowId: 'wf-2', signalName: 'custom', stepKey: 'step-a' },
      }),
    ]);
    // Leased: not claimed again before the lease runs out, claimed again after it.
    expect((await store.claim(10_000, 6_000, 10_000)).some((c) => c.requestId === req)).toBe(false);
    const again = (await store.claim(10_000, 15_001, 10_000)).filter((c) => c.requestId === req);
    expect(again.map((c) => c.seq)).toEqual([claimed[0]!.seq]);
    await store.markForwarded([claimed[0]!.seq]);
    expect((await store.claim(10_000, 100_000, 10_000)).some((c) => c.requestId === req)).toBe(false);
    // A forwarded delivery is not handed to a later subscribe.
    expect(await store.subscribe({ requestId: req, workflowId: 'wf-2', signalName: 'custom' }, 100_000)).toEqual([]);
  });

  it('parks only deliveries whose request has no subscriber, and a later subscribe still takes them', async () => {
    const foreign = id('foreign');
    const routed = id('routed');
    await store.subscribe({ requestId: routed, workflowId: 'wf-3', signalName: 'jobEvent' }, 1_000);
    const a = entry(foreign);
    const b = entry(routed);
    await store.append([a, b], 1_000);
    const claimed = (await store.claim(10_000, 1_000, 10_000)).filter((c) => [foreign, routed].includes(c.requestId));
    expect(await store.park(claimed.map((c) => c.seq))).toBe(1);
    expect(await store.subscribe({ requestId: foreign, workflowId: 'late', signalName: 'jobEvent' }, 2_000)).toEqual([
      a.body,
    ]);
  });

  it('tells when the oldest undelivered delivery arrived, and forgets it once forwarded', async () => {
    const req = id('oldest');
    // Received at 7 ms: earlier than every other delivery of these tests, and due only to a claim at 7.
    await store.append([entry(req)], 7);
    expect(await store.oldestPendingAt()).toBe(7);
    const claimed = await store.claim(10_000, 7, 10_000);
    expect(claimed.map((c) => c.requestId)).toEqual([req]);
    await store.markForwarded(claimed.map((c) => c.seq));
    const after = await store.oldestPendingAt();
    expect(after === null || after > 7).toBe(true);
  });

  it('purges delivered and parked rows after their TTL, never pending ones, and old subscriptions', async () => {
    const req = id('purge');
    const pendingReq = id('pending');
    await store.append([entry(req)], 10_000);
    await store.append([entry(pendingReq)], 10_000);
    const claimed = (await store.claim(10_000, 10_000, 1)).filter((c) => c.requestId === req);
    await store.park(claimed.map((c) => c.seq));
    await store.subscribe({ requestId: id('old-sub'), workflowId: 'wf', signalName: 'jobEvent' }, 10_000);
    const purged = await store.purge(10_001, 10_001);
    expect(purged.deliveries).toBeGreaterThanOrEqual(1);
    expect(purged.subscriptions).toBeGreaterThanOrEqual(1);
    const left = (await store.claim(100_000, 1e12, 1)).map((c) => c.requestId);
    expect(left).toContain(pendingReq);
    expect(left).not.toContain(req);
    expect(await store.pendingCount()).toBeGreaterThanOrEqual(0);
    expect(INBOX_STATE.parked).toBe(3);
  });

  describe('prepared submits', () => {
    const P = PREPARED_STATE;
    const prepare = async (chain = '{"steps":[]}') => {
      const req = id('prep');
      await store.subscribe({ requestId: req, workflowId: 'wf-p', signalName: 'jobEvent' }, 1_000, chain);
      return req;
    };

    it('a subscribe writes the chain once: a retried or racing subscribe keeps the first', async () => {
      const req = await prepare('{"steps":["first"]}');
      await store.subscribe(
        { requestId: req, workflowId: 'wf-p', signalName: 'jobEvent' },
        1_001,
        '{"steps":["other"]}',
      );
      expect(await store.takePrepared(req, 2_000, 30_000)).toEqual({
        workflowId: 'wf-p',
        chain: '{"steps":["first"]}',
      });
    });

    it('is taken once; a take that was never settled is taken again after its lease', async () => {
      const req = await prepare();
      expect(await store.takePrepared(req, 2_000, 30_000)).not.toBeNull();
      expect(await store.takePrepared(req, 2_001, 30_000)).toBeNull();
      expect(await store.takePrepared(req, 40_000, 30_000)).not.toBeNull();
      expect(await store.takePrepared(id('none'), 2_000, 30_000)).toBeNull();
    });

    it('settles with the answer (then a revoke returns it) or as given up, and is not taken again', async () => {
      const submitted = await prepare();
      await store.takePrepared(submitted, 2_000, 30_000);
      expect(await store.settlePrepared(submitted, '{"request_id":"next"}')).toBe(P.submitted);
      expect(await store.takePrepared(submitted, 99_000, 30_000)).toBeNull();
      expect(await store.revokePrepared(submitted)).toEqual({ state: P.submitted, answer: '{"request_id":"next"}' });
      const given = await prepare();
      await store.takePrepared(given, 2_000, 30_000);
      expect(await store.settlePrepared(given, null)).toBe(P.givenUp);
      expect(await store.revokePrepared(given)).toEqual({ state: P.givenUp, answer: null });
    });

    it('a revoke before the take stops it; a revoke during it makes the settle cancel', async () => {
      const early = await prepare();
      expect(await store.revokePrepared(early)).toEqual({ state: P.revoked, answer: null });
      expect(await store.takePrepared(early, 2_000, 30_000)).toBeNull();
      const racing = await prepare();
      await store.takePrepared(racing, 2_000, 30_000);
      expect(await store.revokePrepared(racing)).toEqual({ state: P.revokedWhileTaken, answer: null });
      expect(await store.settlePrepared(racing, '{"request_id":"late"}')).toBe(P.cancelledByBridge);
      expect(await store.revokePrepared(id('none'))).toBeNull();
    });

    it('is purged with the subscriptions', async () => {
      const req = await prepare();
      const purged = await store.purge(0, 1_001);
      expect(purged.prepared).toBeGreaterThanOrEqual(1);
      expect(await store.takePrepared(req, 2_000, 30_000)).toBeNull();
    });
  });

  it('answers ping', async () => {
    expect(await store.ping()).toBe(true);
  });
});

describe('postgres store while the server is down', () => {
  it('rejects with RouteStoreUnavailableError, pings false, and works again once the server is back', async () => {
    const store = openPostgresRouteStore(postgres.url, { statementTimeoutMs: 2_000 });
    opened.push(store);
    const req = id('down');
    await store.append([entry(req)], 1_000);
    postgres.stop();
    try {
      await expect(store.append([entry(req)], 2_000)).rejects.toBeInstanceOf(RouteStoreUnavailableError);
      expect(await store.ping()).toBe(false);
    } finally {
      await postgres.start();
    }
    expect(await store.append([entry(req)], 3_000)).toBe(1);
  }, 120_000);
});
