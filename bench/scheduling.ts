/**
 * The cost of the account's slots (docs/decisions/account-slots.md), on both route stores: SQLite in a
 * temporary file and PostgreSQL on a throwaway server (initdb/pg_ctl, as `npm run cluster` starts it).
 *  - free path: a job's slot taken at once and given back with nobody waiting (the two store calls a
 *    job makes when the account is under its caps), ms per job;
 *  - hand-on: with `waiters` submissions queued (a provider-bound batch) behind `cap` slots, each
 *    release that grants the next waiter in the same transaction, ms per grant: the store's share of
 *    the time from a slot freed to the next submit (the signal and the submit come on top).
 *
 *   npm run bench -- --only scheduling [--waiters 10000]
 *
 * The same `--only scheduling` then runs the slots on the local stack (./scheduling-stack.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPostgresRouteStore, openSqliteRouteStore, type RouteStore } from '../src/routing';
import type { SlotCaps, SlotRequest } from '../src/routing/slot-store';
import { startTestPostgres, type TestPostgres } from '../test/helpers/postgres';
import { summarize, type Summary } from './lib/stats';

export interface SchedulingSize {
  /** Jobs through the free path per backend. */
  freeJobs: number;
  /** Submissions queued for the hand-on measurement. */
  waiters: number;
  /** Grants measured (releases that hand a slot on). */
  grants: number;
  /** Slots (one model's cap). */
  cap: number;
}

export const SCHEDULING_FULL: SchedulingSize = { freeJobs: 2_000, waiters: 10_000, grants: 2_000, cap: 8 };
export const SCHEDULING_QUICK: SchedulingSize = { freeJobs: 100, waiters: 200, grants: 100, cap: 8 };

/** One backend's figures, ms. */
export interface SlotCost {
  backend: 'sqlite' | 'postgres';
  /** acquire + release per job, nobody waiting. */
  freePathMs: Summary;
  /** One release that grants the next of `waiters` queued submissions. */
  handOnMs: Summary;
  /** Queueing one submission (the acquire that finds no room). */
  enqueueMs: Summary;
}

const MODEL = 'service-video-cinema-long-form-from-references';

const request = (holder: string, i: number): SlotRequest => ({
  holder,
  workflowId: `pipeline/bench-${i}`,
  runId: 'run',
  model: MODEL,
  priority: 3,
  fairnessKey: i % 4 === 0 ? 'batch/light' : 'batch/heavy',
  weight: i % 4 === 0 ? 1 : 3,
});

async function timed(work: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await work();
  return performance.now() - t0;
}

/** Measures one store (empty slot tables). */
async function measure(store: RouteStore, size: SchedulingSize): Promise<SlotCost> {
  const caps: SlotCaps = { account: size.cap, models: { [MODEL]: size.cap } };
  const free: number[] = [];
  for (let i = 0; i < size.freeJobs; i += 1) {
    const holder = `free-${i}`;
    free.push(
      await timed(async () => {
        await store.slots.acquire(request(holder, i), caps, Date.now());
        await store.slots.release(holder, caps, Date.now());
      }),
    );
  }
  for (let i = 0; i < size.cap; i += 1) await store.slots.acquire(request(`held-${i}`, i), caps, Date.now());
  const enqueue: number[] = [];
  for (let i = 0; i < size.waiters; i += 1)
    enqueue.push(await timed(() => store.slots.acquire(request(`wait-${i}`, i), caps, Date.now())));
  const handOn: number[] = [];
  const holders = [...Array(size.cap).keys()].map((i) => `held-${i}`);
  for (let i = 0; i < size.grants; i += 1) {
    const holder = holders[i % holders.length] as string;
    let granted: string | undefined;
    handOn.push(
      await timed(async () => {
        granted = (await store.slots.release(holder, caps, Date.now())).grants[0]?.holder;
      }),
    );
    if (!granted) throw new Error(`release ${i} granted nothing: fewer waiters than grants`);
    holders[i % holders.length] = granted;
  }
  return {
    backend: store.backend,
    freePathMs: summarize(free),
    handOnMs: summarize(handOn),
    enqueueMs: summarize(enqueue.slice(-Math.min(enqueue.length, 1_000))),
  };
}

/** Runs the slot-cost measurement on SQLite and PostgreSQL. */
export async function runScheduling(
  size: SchedulingSize,
  log: (line: string) => void,
): Promise<{ size: SchedulingSize; costs: SlotCost[] }> {
  const home = mkdtempSync(join(tmpdir(), 'reelflow-bench-slots-'));
  const costs: SlotCost[] = [];
  let pg: TestPostgres | undefined;
  try {
    const sqlite = openSqliteRouteStore(join(home, 'routes.sqlite'));
    costs.push(await measure(sqlite, size));
    await sqlite.close();
    pg = await startTestPostgres();
    const postgres = openPostgresRouteStore(pg.url);
    costs.push(await measure(postgres, size));
    await postgres.close();
  } finally {
    pg?.close();
    rmSync(home, { recursive: true, force: true });
  }
  for (const cost of costs)
    log(
      `${cost.backend}: free path ${cost.freePathMs.p50} ms/job (p99 ${cost.freePathMs.p99}); ` +
        `enqueue ${cost.enqueueMs.p50} ms; hand-on with ${size.waiters} waiting ${cost.handOnMs.p50} ms (p99 ${cost.handOnMs.p99})`,
    );
  return { size, costs };
}
