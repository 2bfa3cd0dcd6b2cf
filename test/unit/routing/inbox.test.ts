import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { Inbox, InboxFullError, openSqliteRouteStore, startForwarder, type RouteStore } from '../../../src/routing';

let store: RouteStore;
let commits = 0;

beforeEach(() => {
  const real = openSqliteRouteStore(':memory:');
  commits = 0;
  store = {
    ...real,
    append: (entries, now) => {
      commits += 1;
      return real.append(entries, now);
    },
  };
});

afterEach(() => store.close());

const entry = (i: number) => ({ eventId: `evt-${i}`, requestId: `req-${i}`, body: `{"n":${i}}` });

describe('Inbox', () => {
  it('carries the deliveries that arrive together in one commit and counts them as backlog', async () => {
    const inbox = new Inbox({ store, backlogLimit: 1_000 });
    await Promise.all(Array.from({ length: 50 }, (_, i) => inbox.append(entry(i))));
    expect(commits).toBe(1);
    expect(inbox.backlog).toBe(50);
    expect(await store.pendingCount()).toBe(50);
  });

  it('knows its recent rate of deliveries (the forwarder yields while it is high)', async () => {
    let clock = 10_000;
    const inbox = new Inbox({ store, backlogLimit: 1_000, now: () => clock });
    await Promise.all(Array.from({ length: 40 }, (_, i) => inbox.append(entry(i))));
    expect(inbox.recentRate()).toBe(400);
    clock += 50;
    expect(inbox.recentRate()).toBe(400);
    clock += 100;
    expect(inbox.recentRate()).toBe(200);
    clock += 50;
    expect(inbox.recentRate()).toBe(0);
  });

  it('reads a steady stream at its rate whatever the phase of its 100 ms slots', async () => {
    let clock = 10_000;
    const inbox = new Inbox({ store, backlogLimit: 10_000, now: () => clock });
    const rates: number[] = [];
    // 3 deliveries every 10 ms: 300 a second.
    for (let t = 0; t < 400; t += 10) {
      clock = 10_000 + t;
      await Promise.all([0, 1, 2].map((i) => inbox.append(entry(t * 3 + i))));
      if (t >= 100) rates.push(inbox.recentRate());
    }
    expect(Math.min(...rates)).toBeGreaterThanOrEqual(270);
    expect(Math.max(...rates)).toBeLessThanOrEqual(340);
  });

  it('counts as crowded for 100 ms after a commit of 4 deliveries or more, not after commits of 3', async () => {
    let clock = 10_000;
    const inbox = new Inbox({ store, backlogLimit: 1_000, now: () => clock });
    await Promise.all([0, 1, 2].map((i) => inbox.append(entry(i))));
    expect(inbox.crowded()).toBe(false);
    await Promise.all([3, 4, 5, 6].map((i) => inbox.append(entry(i))));
    expect(inbox.crowded()).toBe(true);
    clock += 99;
    await inbox.append(entry(7));
    expect(inbox.crowded()).toBe(true);
    clock += 1;
    expect(inbox.crowded()).toBe(false);
  });

  it('counts a redelivery of a stored event_id once', async () => {
    const inbox = new Inbox({ store, backlogLimit: 1_000 });
    await inbox.append(entry(1));
    await inbox.append(entry(1));
    expect(inbox.backlog).toBe(1);
  });

  it('refuses past its backlog bound, and takes deliveries again once the forwarder drained some', async () => {
    const inbox = new Inbox({ store, backlogLimit: 3 });
    await Promise.all([0, 1, 2].map((i) => inbox.append(entry(i))));
    await expect(inbox.append(entry(3))).rejects.toBeInstanceOf(InboxFullError);
    inbox.drained(1);
    await expect(inbox.append(entry(3))).resolves.toBeUndefined();
  });

  it('rejects every delivery of a commit the store refused, and wakes no one', async () => {
    const inbox = new Inbox({ store, backlogLimit: 100 });
    let woken = 0;
    inbox.onAppended(() => (woken += 1));
    await store.close();
    const answers = await Promise.allSettled([inbox.append(entry(1)), inbox.append(entry(2))]);
    expect(answers.map((a) => a.status)).toEqual(['rejected', 'rejected']);
    expect(woken).toBe(0);
  });
});

describe('the forwarder and a store that leaves checkpoints to it', () => {
  /** An inbox whose recent rate the test sets (what the forwarder reads to tell a burst). */
  class RatedInbox extends Inbox {
    rate = 0;
    override recentRate(): number {
      return this.rate;
    }
  }
  const until = async (done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  it('checkpoints once a second while deliveries are quiet, and only every checkpointEveryMs during a burst', async () => {
    let clock = 100_000;
    let checkpoints = 0;
    const counted: RouteStore = { ...store, checkpoint: async () => void (checkpoints += 1) };
    const inbox = new RatedInbox({ store: counted, backlogLimit: 1_000, now: () => clock });
    const forwarder = startForwarder({
      store: counted,
      // No delivery is signalled here: the store's checkpoints are what is tested.
      client: {} as Client,
      warmUp: false,
      inbox,
      ttlMs: 1e9,
      idlePollMs: 2,
      checkpointEveryMs: 10_000,
      now: () => clock,
    });
    try {
      await until(() => checkpoints === 1);
      clock += 500;
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(checkpoints).toBe(1);
      clock += 500;
      await until(() => checkpoints === 2);
      expect(checkpoints).toBe(2);
      inbox.rate = 1_000;
      clock += 5_000;
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(checkpoints).toBe(2);
      clock += 5_000;
      await until(() => checkpoints === 3);
      expect(checkpoints).toBe(3);
    } finally {
      await forwarder.stop();
    }
  });
});

describe('the SQLite store with checkpoints left to its caller', () => {
  const walBytes = (file: string) => statSync(`${file}-wal`).size;
  const fill = async (target: RouteStore, from: number) => {
    const body = 'x'.repeat(2_000);
    for (let i = from; i < from + 3_000; i += 100)
      await target.append(
        Array.from({ length: 100 }, (_, j) => ({ eventId: `e-${i + j}`, requestId: `r-${i + j}`, body })),
        1,
      );
  };

  it('never checkpoints inside a commit (the log grows past SQLite’s 1,000 pages) until checkpoint() runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'route-wal-'));
    const auto = openSqliteRouteStore(join(dir, 'auto.sqlite'));
    const caller = openSqliteRouteStore(join(dir, 'caller.sqlite'), { checkpoints: 'caller' });
    try {
      await fill(auto, 0);
      await fill(caller, 0);
      const page = 4_096;
      expect(walBytes(join(dir, 'auto.sqlite'))).toBeLessThan(1_100 * page);
      const grown = walBytes(join(dir, 'caller.sqlite'));
      expect(grown).toBeGreaterThan(1_100 * page);
      // After a checkpoint the log is written again from its start: as much again does not double it.
      await caller.checkpoint!();
      await fill(caller, 10_000);
      expect(walBytes(join(dir, 'caller.sqlite'))).toBeLessThan(grown * 1.25);
    } finally {
      await auto.close();
      await caller.close();
    }
  });
});

describe('the forwarder and the account’s slots', () => {
  const event = (requestId: string, eventType: string) =>
    JSON.stringify({
      event_id: `evt-${requestId}-${eventType}`,
      event_type: eventType,
      request_id: requestId,
      data: null,
    });

  it('frees the slot of a job whose terminal event it forwards, and only then', async () => {
    const caps = { account: 1, models: {} };
    const ask = (holder: string) => ({
      holder,
      workflowId: `wf-${holder}`,
      runId: 'run',
      model: 'upscale',
      priority: 3,
      fairnessKey: 'k',
      weight: 1,
    });
    await store.slots.acquire(ask('done'), caps, 1);
    await store.slots.attachRequest('done', 'req-done');
    await store.slots.acquire(ask('next'), caps, 2);
    const released: string[] = [];
    const forwarder = startForwarder({
      store,
      // No subscriber and no route-workflow fallback: nothing is signalled, the slot is what is tested.
      client: {} as Client,
      warmUp: false,
      routeWorkflowFallback: false,
      ttlMs: 1e9,
      idlePollMs: 1e6,
      slots: {
        releaseRequest: async (requestId) => {
          released.push(requestId);
          await store.slots.releaseRequest(requestId, caps, Date.now());
        },
      },
    });
    try {
      await store.append(
        [
          { eventId: 'e1', requestId: 'req-running', body: event('req-running', 'generation.progress') },
          { eventId: 'e2', requestId: 'req-done', body: event('req-done', 'generation.completed') },
        ],
        Date.now(),
      );
      await forwarder.round();
      expect(released).toEqual(['req-done']);
      const snapshot = await store.slots.snapshot();
      expect(snapshot.waiting).toEqual([]);
      expect(snapshot.heldByKey).toEqual({ k: 1 });
      expect((await store.slots.log(0, 10)).map((e) => e.holder)).toEqual(['done', 'next']);
    } finally {
      await forwarder.stop();
    }
  });
});
