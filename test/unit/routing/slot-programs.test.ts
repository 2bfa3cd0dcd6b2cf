import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Pool } from 'pg';
import { openPostgresRouteStore, openSqliteRouteStore, type RouteStore } from '../../../src/routing';
import type { SlotCaps, SlotRequest, SlotStore } from '../../../src/routing/slot-store';
import { startTestPostgres, type TestPostgres } from '../../helpers/postgres';

/**
 * The grant order of the account's slots on both backends: caps per account and per model, priority
 * first, then weighted fair share between fairness keys, and a freed slot handed on in its release.
 */

let postgres: TestPostgres;
let pool: Pool;
const opened: RouteStore[] = [];

beforeAll(async () => {
  postgres = await startTestPostgres();
  pool = new Pool({ connectionString: postgres.url, max: 1 });
}, 120_000);

afterAll(async () => {
  for (const store of opened) await store.close();
  await pool?.end();
  postgres?.close();
});

const SHARE_KEYS = 'SELECT fairness_key FROM reelflow_slot_shares ORDER BY fairness_key';
let purge: (before: number) => Promise<unknown>;
/** The fairness keys with a row in `reelflow_slot_shares`, read beside the store. */
let shareKeys: () => Promise<string[]>;
const backends: [string, () => Promise<SlotStore>][] = [
  [
    'sqlite',
    async () => {
      const file = join(mkdtempSync(join(tmpdir(), 'slots-')), 'routes.sqlite');
      const store = openSqliteRouteStore(file);
      opened.push(store);
      purge = (before) => store.purge(before, before);
      shareKeys = async () => {
        const db = new DatabaseSync(file, { readOnly: true });
        try {
          return (db.prepare(SHARE_KEYS).all() as { fairness_key: string }[]).map((row) => row.fairness_key);
        } finally {
          db.close();
        }
      };
      return store.slots;
    },
  ],
  [
    'postgres',
    async () => {
      const store = openPostgresRouteStore(postgres.url);
      opened.push(store);
      // The schema exists once the store answered; each test starts from empty slot tables.
      await store.slots.snapshot();
      await pool.query('TRUNCATE reelflow_slots, reelflow_slot_shares, reelflow_slot_log');
      purge = (before) => store.purge(before, before);
      shareKeys = async () =>
        (await pool.query<{ fairness_key: string }>(SHARE_KEYS)).rows.map((row) => row.fairness_key);
      return store.slots;
    },
  ],
];

const ask = (holder: string, over: Partial<SlotRequest> = {}): SlotRequest => ({
  holder,
  workflowId: `wf-${holder}`,
  runId: `run-${holder}`,
  model: 'upscale',
  priority: 3,
  fairnessKey: 'batch/a',
  weight: 1,
  ...over,
});

describe.each(backends)('slots on %s', (_name, open) => {
  let slots: SlotStore;
  beforeEach(async () => {
    slots = await open();
  });

  it('grants under the account cap and each model cap, queues the rest, and hands a freed slot on', async () => {
    const caps: SlotCaps = { account: 3, models: { upscale: 2 } };
    expect(await slots.acquire(ask('u1'), caps, 1)).toBe('granted');
    expect(await slots.acquire(ask('u2'), caps, 2)).toBe('granted');
    expect(await slots.acquire(ask('u3'), caps, 3)).toBe('waiting');
    expect(await slots.acquire(ask('l1', { model: 'long-form' }), caps, 4)).toBe('granted');
    expect(await slots.acquire(ask('l2', { model: 'long-form' }), caps, 5)).toBe('waiting');
    // Asking again changes nothing.
    expect(await slots.acquire(ask('u3'), caps, 6)).toBe('waiting');
    expect(await slots.acquire(ask('u1'), caps, 6)).toBe('held');
    expect((await slots.snapshot()).heldByModel).toEqual({ upscale: 2, 'long-form': 1 });

    // An upscale slot frees: the upscale waiter gets it (the long-form one waited, but the account is full again).
    expect((await slots.release('u1', caps, 10)).grants).toEqual([
      { holder: 'u3', workflowId: 'wf-u3', runId: 'run-u3', fairnessKey: 'batch/a' },
    ]);
    expect(await slots.acquire(ask('u3'), caps, 11)).toBe('held');
    // Releasing twice, or a holder never seen, grants nothing.
    expect((await slots.release('u1', caps, 12)).grants).toEqual([]);
    expect((await slots.release('nobody', caps, 12)).grants).toEqual([]);
    expect((await slots.release('l1', caps, 13)).grants).toEqual([
      { holder: 'l2', workflowId: 'wf-l2', runId: 'run-l2', fairnessKey: 'batch/a' },
    ]);
    const snapshot = await slots.snapshot();
    expect(snapshot.heldByModel).toEqual({ upscale: 2, 'long-form': 1 });
    expect(snapshot.waiting).toEqual([]);
  });

  it('frees a slot by the job it was used for (the bridge, at the job’s terminal webhook), once', async () => {
    const caps: SlotCaps = { account: 1, models: {} };
    expect(await slots.acquire(ask('a'), caps, 1)).toBe('granted');
    expect(await slots.acquire(ask('b'), caps, 2)).toBe('waiting');
    // A waiter names no job: attaching one to it changes nothing.
    await slots.attachRequest('b', 'req-b');
    expect(await slots.releaseRequest('req-b', caps, 3)).toEqual([]);
    await slots.attachRequest('a', 'req-a');
    expect(await slots.releaseRequest('req-a', caps, 4)).toEqual([
      { holder: 'b', workflowId: 'wf-b', runId: 'run-b', fairnessKey: 'batch/a' },
    ]);
    // The pipeline's own release (its settle) and a second webhook find nothing left to free.
    expect((await slots.release('a', caps, 5)).grants).toEqual([]);
    expect(await slots.releaseRequest('req-a', caps, 5)).toEqual([]);
    expect(await slots.releaseRequest('req-unknown', caps, 5)).toEqual([]);
    expect((await slots.snapshot()).heldByModel).toEqual({ upscale: 1 });
    const log = await slots.log(0, 10);
    expect(log.map((e) => [e.holder, e.grantedAt, e.releasedAt])).toEqual([
      ['a', 1, 4],
      ['b', 4, null],
    ]);
  });

  it('keeps a waiter’s submit beside its place and hands it over with its grant while it is valid', async () => {
    const caps: SlotCaps = { account: 1, models: {} };
    const submit = { model: 'upscale', input: { video_url: 'https://cdn.example/a.mp4', scale: 2 } };
    expect(await slots.acquire(ask('h'), caps, 1)).toBe('granted');
    // Kept only while it waits: a slot taken at once is used by the submit that asked.
    expect(await slots.keepSubmit('h', submit)).toBe(false);
    for (const [i, holder] of ['w', 'expired', 'plain'].entries())
      expect(await slots.acquire(ask(holder), caps, 2 + i)).toBe('waiting');
    expect(await slots.keepSubmit('w', submit)).toBe(true);
    expect(await slots.keepSubmit('expired', { ...submit, validUntil: 5 })).toBe(true);
    expect((await slots.release('h', caps, 5)).grants).toEqual([
      { holder: 'w', workflowId: 'wf-w', runId: 'run-w', fairnessKey: 'batch/a', submit },
    ]);
    // The pipeline finds it after its grant (nothing submitted with it yet).
    expect(await slots.ahead('w')).toEqual({ submit });
    // Its signed URLs expired (valid until 5, granted at 6): the pipeline resolves its input again.
    expect((await slots.release('w', caps, 6)).grants).toEqual([
      { holder: 'expired', workflowId: 'wf-expired', runId: 'run-expired', fairnessKey: 'batch/a' },
    ]);
    // A waiter that kept none is granted without one.
    expect((await slots.release('expired', caps, 7)).grants).toEqual([
      { holder: 'plain', workflowId: 'wf-plain', runId: 'run-plain', fairnessKey: 'batch/a' },
    ]);
    expect(await slots.ahead('plain')).toEqual({});
  });

  it('a job submitted ahead is adopted by its pipeline, cancelled when its waiter left, and over at its webhook', async () => {
    const caps: SlotCaps = { account: 2, models: {} };
    const job = (id: string) => ({
      request_id: id,
      status: 'IN_QUEUE' as const,
      model: 'upscale',
      status_url: `https://svc/requests/${id}/status`,
      response_url: `https://svc/requests/${id}`,
      cancel_url: `https://svc/requests/${id}/cancel`,
    });
    await slots.acquire(ask('adopted'), caps, 1);
    await slots.acquire(ask('left'), caps, 1);
    await slots.acquire(ask('done'), caps, 1);
    // Submitted ahead, then the pipeline finds that job and adopts it: its release cancels nothing.
    expect(await slots.attachAhead('adopted', job('req-adopted'))).toBe(true);
    expect(await slots.ahead('adopted')).toEqual({ request: job('req-adopted') });
    await slots.attachRequest('adopted', 'req-adopted');
    expect(await slots.release('adopted', caps, 2)).toEqual({
      grants: [{ holder: 'done', workflowId: 'wf-done', runId: 'run-done', fairnessKey: 'batch/a' }],
    });
    // Its waiter left before adopting it: the release hands the job back to be cancelled.
    expect(await slots.attachAhead('left', job('req-left'))).toBe(true);
    expect(await slots.release('left', caps, 3)).toEqual({ grants: [], unadopted: job('req-left') });
    // A waiter gone before the attach: the submitter learns it (and cancels the job itself).
    expect(await slots.attachAhead('left', job('req-late'))).toBe(false);
    // A job that ended before its pipeline adopted it frees its room at its terminal webhook (handed on),
    // and its row stays for the pipeline, which finds the job and adopts it; its release grants nothing more.
    expect(await slots.acquire(ask('other'), caps, 4)).toBe('granted');
    expect(await slots.acquire(ask('next'), caps, 4)).toBe('waiting');
    expect(await slots.attachAhead('done', job('req-done'))).toBe(true);
    expect(await slots.releaseRequest('req-done', caps, 5)).toEqual([
      { holder: 'next', workflowId: 'wf-next', runId: 'run-next', fairnessKey: 'batch/a' },
    ]);
    expect(await slots.releaseRequest('req-done', caps, 5)).toEqual([]);
    expect((await slots.snapshot()).heldByKey).toEqual({ 'batch/a': 2 });
    expect(await slots.acquire(ask('done'), caps, 6)).toBe('held');
    expect(await slots.ahead('done')).toEqual({ request: job('req-done') });
    await slots.attachRequest('done', 'req-done');
    expect(await slots.release('done', caps, 7)).toEqual({ grants: [] });
    for (const holder of ['other', 'next']) await slots.release(holder, caps, 8);
    expect((await slots.snapshot()).heldByModel).toEqual({});
  });

  it('a waiter that leaves the queue is never granted', async () => {
    const caps: SlotCaps = { account: 1, models: {} };
    await slots.acquire(ask('h'), caps, 1);
    await slots.acquire(ask('w1'), caps, 2);
    await slots.acquire(ask('w2'), caps, 3);
    expect((await slots.release('w1', caps, 4)).grants).toEqual([]);
    expect((await slots.release('h', caps, 5)).grants.map((grant) => grant.holder)).toEqual(['w2']);
  });

  it('grants the best priority first, then the oldest waiter', async () => {
    const caps: SlotCaps = { account: 1, models: {} };
    await slots.acquire(ask('h'), caps, 1);
    for (const [i, holder] of ['w1', 'w2', 'w3'].entries()) await slots.acquire(ask(holder), caps, 10 + i);
    await slots.acquire(ask('rush', { priority: 1, fairnessKey: 'pipeline/rush' }), caps, 20);
    await slots.acquire(ask('low', { priority: 5 }), caps, 5);
    const order: string[] = [];
    let holder = 'h';
    for (let i = 0; i < 5; i += 1) {
      const [grant] = (await slots.release(holder, caps, 100 + i)).grants;
      if (!grant) break;
      order.push(grant.holder);
      holder = grant.holder;
    }
    expect(order).toEqual(['rush', 'w1', 'w2', 'w3', 'low']);
    const log = await slots.log(0, 100);
    expect(log.map((entry) => entry.holder)).toEqual(['h', 'rush', 'w1', 'w2', 'w3', 'low']);
    expect(log[0]?.releasedAt).toBe(100);
  });

  it('shares slots between fairness keys by weight (1:3)', async () => {
    const caps: SlotCaps = { account: 1, models: {} };
    await slots.acquire(ask('h'), caps, 1);
    for (let i = 0; i < 20; i += 1) {
      await slots.acquire(ask(`a${i}`, { fairnessKey: 'batch/light', weight: 1 }), caps, 10 + i);
      await slots.acquire(ask(`b${i}`, { fairnessKey: 'batch/heavy', weight: 3 }), caps, 10 + i);
    }
    const counts = { light: 0, heavy: 0 };
    let holder = 'h';
    for (let i = 0; i < 16; i += 1) {
      const [grant] = (await slots.release(holder, caps, 100 + i)).grants;
      holder = (grant as { holder: string }).holder;
      counts[holder.startsWith('a') ? 'light' : 'heavy'] += 1;
    }
    expect(counts).toEqual({ light: 4, heavy: 12 });
    const snapshot = await slots.snapshot();
    expect(snapshot.waiting).toEqual([
      { priority: 3, fairnessKey: 'batch/heavy', count: 8 },
      { priority: 3, fairnessKey: 'batch/light', count: 16 },
    ]);
  });

  it('a key that starts waiting late joins at the others’ share instead of taking every slot', async () => {
    const caps: SlotCaps = { account: 1, models: {} };
    await slots.acquire(ask('h'), caps, 1);
    for (let i = 0; i < 12; i += 1) await slots.acquire(ask(`a${i}`, { fairnessKey: 'batch/old' }), caps, 10 + i);
    let holder = 'h';
    for (let i = 0; i < 8; i += 1) holder = (await slots.release(holder, caps, 100 + i)).grants[0]!.holder;
    for (let i = 0; i < 4; i += 1) await slots.acquire(ask(`n${i}`, { fairnessKey: 'batch/new' }), caps, 200 + i);
    const next: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      holder = (await slots.release(holder, caps, 300 + i)).grants[0]!.holder;
      next.push(holder[0]!);
    }
    // Alternating (the newcomer is not owed the eight grants the old key had before it came).
    expect(next.sort()).toEqual(['a', 'a', 'n', 'n']);
  });

  it('lists slots granted but not yet signalled, and marks them held', async () => {
    const caps: SlotCaps = { account: 1, models: {} };
    await slots.acquire(ask('h'), caps, 1);
    await slots.acquire(ask('w'), caps, 2);
    await slots.release('h', caps, 3);
    expect((await slots.heldSince(10, 10)).map((slot) => [slot.holder, slot.state])).toEqual([['w', 1]]);
    await slots.markSignalled(['w']);
    expect((await slots.heldSince(10, 10)).map((slot) => [slot.holder, slot.state])).toEqual([['w', 2]]);
    expect(await slots.heldSince(3, 10)).toEqual([]);
  });

  it('the route store’s purge drops released grants from the slot log with the old subscriptions', async () => {
    const caps: SlotCaps = { account: 1, models: {} };
    await slots.acquire(ask('old'), caps, 1);
    await slots.release('old', caps, 2);
    await slots.acquire(ask('live'), caps, 3);
    await purge(10);
    expect((await slots.log(0, 10)).map((entry) => entry.holder)).toEqual(['live']);
  });

  it('the purge forgets the share of a key with nothing waiting or held once its grants left the log, and keeps the rest', async () => {
    const caps: SlotCaps = { account: 10, models: { 'long-form': 1 } };
    const key = (fairnessKey: string, model = 'upscale') => ({ fairnessKey, model });
    await slots.acquire(ask('idle', key('batch/idle')), caps, 1);
    await slots.release('idle', caps, 2);
    await slots.acquire(ask('recent', key('batch/recent')), caps, 3);
    await slots.release('recent', caps, 20);
    await slots.acquire(ask('holding', key('batch/holding', 'long-form')), caps, 4);
    await slots.acquire(ask('waiting', key('batch/waiting', 'long-form')), caps, 5);
    expect(await shareKeys()).toEqual(['batch/holding', 'batch/idle', 'batch/recent', 'batch/waiting']);
    await purge(10);
    // Idle: released before the cutoff. Recent: released after it (its grant still in the log).
    expect(await shareKeys()).toEqual(['batch/holding', 'batch/recent', 'batch/waiting']);
    // A key goes once its last grant left the log; the waiter its slot held back was granted as usual.
    await slots.release('holding', caps, 30);
    await purge(25);
    expect(await shareKeys()).toEqual(['batch/holding', 'batch/waiting']);
    await purge(31);
    expect(await shareKeys()).toEqual(['batch/waiting']);
    expect((await slots.heldSince(100, 10)).map((slot) => slot.holder)).toEqual(['waiting']);
  });

  it('grants waiting work when caps were raised', async () => {
    await slots.acquire(ask('h'), { account: 1, models: {} }, 1);
    await slots.acquire(ask('w1'), { account: 1, models: {} }, 2);
    await slots.acquire(ask('w2'), { account: 1, models: {} }, 3);
    const grants = await slots.grantWaiting({ account: 2, models: {} }, 4);
    expect(grants.map((grant) => grant.holder)).toEqual(['w1']);
  });
});
