/**
 * What the scheduling bench reads from the service's job clocks and the route store's slot log
 * (docs/decisions/account-slots.md): pure functions, so that the figures are checked on made-up
 * records (test/bench/slot-figures.test.ts) before they are trusted on real ones.
 */
import type { SlotLogEntry } from '../../src/routing/slot-store';
import type { JobClocks } from '../../src/local-service/routes/clocks';
import { summarize, type Summary } from './stats';

/** A job as the figures need it: the service's clocks of a job that ended. */
export type EndedJob = Pick<JobClocks, 'model' | 'idempotencyKey' | 'receivedAt' | 'webhookSentAt'> & {
  startedAt: number;
  completedAt: number;
};

/** The jobs of `jobs` that started and ended. */
export function endedJobs(jobs: readonly JobClocks[]): EndedJob[] {
  return jobs.filter((j): j is JobClocks & EndedJob => j.startedAt !== null && j.completedAt !== null);
}

/** One stage of a flow shop: the model its jobs run on and the slots it has. */
export interface Stage {
  model: string;
  slots: number;
}

/** A flow shop's lower bound and what it was computed from, ms. */
export interface FlowShopIdeal {
  idealMs: number;
  /** The stage whose job-seconds ÷ slots is the largest. */
  busiest: string;
  /** That stage's job-seconds ÷ its slots. */
  busiestLoadMs: number;
  /** One job (the stage's mean) of each stage before the busiest: its first job waits for them. */
  earlierStagesMs: number;
  /** One job (the stage's mean) of each stage after the busiest: they follow its last job. */
  laterStagesMs: number;
}

const jobMs = (job: EndedJob) => job.completedAt - job.startedAt;
const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

/**
 * The flow-shop ideal of a batch of chained jobs, from the service's own clocks: the busiest model's
 * job-seconds (started → completed) ÷ its slots, plus one job (the stage's mean) of every later stage —
 * and of every earlier one, which must run before the busiest stage's first job (when the busiest stage
 * is the first, that part is nothing).
 */
export function flowShopIdeal(jobs: readonly EndedJob[], stages: readonly Stage[]): FlowShopIdeal {
  const durations = stages.map((stage) => jobs.filter((j) => j.model === stage.model).map(jobMs));
  const loads = stages.map((stage, i) => sum(durations[i] ?? []) / stage.slots);
  const busiest = loads.indexOf(Math.max(...loads));
  const earlierStagesMs = sum(durations.slice(0, busiest).map(mean));
  const laterStagesMs = sum(durations.slice(busiest + 1).map(mean));
  return {
    idealMs: earlierStagesMs + (loads[busiest] ?? 0) + laterStagesMs,
    busiest: stages[busiest]?.model ?? '',
    busiestLoadMs: loads[busiest] ?? 0,
    earlierStagesMs,
    laterStagesMs,
  };
}

/** First submit received → last job completed, on the service's clock. */
export function makespanMs(jobs: readonly EndedJob[]): number {
  if (jobs.length === 0) return 0;
  return Math.max(...jobs.map((j) => j.completedAt)) - Math.min(...jobs.map((j) => j.receivedAt));
}

/** How busy `cap` slots were while jobs waited for them. */
export interface BusyFraction {
  /** ∫ min(jobs at the service, cap) dt ÷ (cap × window). */
  busy: number;
  /** The window: from the first moment all `cap` slots were in use to the last submit received, ms. */
  windowMs: number;
}

/**
 * The share of `cap` slots in use at the service (a job counts from its submit's arrival to its
 * completion) over the window in which work was waiting for them: from the first moment the cap was
 * reached to the last submit (after it, nothing waits and slots empty by design).
 */
export function busyFraction(jobs: readonly EndedJob[], cap: number): BusyFraction {
  const edges = jobs
    .flatMap((j) => [
      { at: j.receivedAt, delta: 1 },
      { at: j.completedAt, delta: -1 },
    ])
    .sort((a, b) => a.at - b.at || a.delta - b.delta);
  const end = Math.max(...jobs.map((j) => j.receivedAt));
  let inFlight = 0;
  let start: number | undefined;
  let used = 0;
  let last = 0;
  for (const edge of edges) {
    if (edge.at > end) break;
    if (start !== undefined) used += Math.min(inFlight, cap) * (edge.at - last);
    last = edge.at;
    inFlight += edge.delta;
    if (start === undefined && inFlight >= cap) start = edge.at;
  }
  if (start === undefined || end <= start) return { busy: 0, windowMs: 0 };
  used += Math.min(inFlight, cap) * (end - last);
  return { busy: used / (cap * (end - start)), windowMs: end - start };
}

/** The time between a slot freed and the job it went to reaching the service, ms. */
export interface HandOnTimes {
  /** Releases that handed their slot straight to a waiter (same transaction, same instant). */
  handOns: number;
  /** Slot freed in the route store → the waiter's submit received by the service. */
  freedToSubmit: Summary;
  /** The freeing job completed at the service → the waiter's submit received: the slot's idle time at the provider. */
  completedToSubmit: Summary;
  /** Its parts before the release: completed → the webhook sent (the service), sent → the slot freed (reelflow). */
  completedToWebhook: Summary;
  webhookToFreed: Summary;
}

/**
 * Pairs each grant made by a release (its `grantedAt` equals a `releasedAt` of the same model) with
 * the released job, and measures from the release, and from the released job's completion, to the
 * granted job's submit at the service. Jobs are found by Idempotency-Key (a slot's holder).
 */
export function handOnTimes(log: readonly SlotLogEntry[], jobs: readonly EndedJob[]): HandOnTimes {
  const byKey = new Map(jobs.map((j) => [j.idempotencyKey, j]));
  const released = new Map<string, SlotLogEntry[]>();
  for (const entry of log) {
    if (entry.releasedAt === null) continue;
    const at = `${entry.model}@${entry.releasedAt}`;
    released.set(at, [...(released.get(at) ?? []), entry]);
  }
  const freed: number[] = [];
  const idle: number[] = [];
  const dispatch: number[] = [];
  const toRelease: number[] = [];
  for (const grant of log) {
    const from = released.get(`${grant.model}@${grant.grantedAt}`)?.shift();
    const job = byKey.get(grant.holder);
    if (!from || !job) continue;
    freed.push(job.receivedAt - grant.grantedAt);
    const before = byKey.get(from.holder);
    if (!before) continue;
    idle.push(job.receivedAt - before.completedAt);
    if (before.webhookSentAt === null) continue;
    dispatch.push(before.webhookSentAt - before.completedAt);
    toRelease.push(grant.grantedAt - before.webhookSentAt);
  }
  return {
    handOns: freed.length,
    freedToSubmit: summarize(freed),
    completedToSubmit: summarize(idle),
    completedToWebhook: summarize(dispatch),
    webhookToFreed: summarize(toRelease),
  };
}

/** Two fairness keys' grants while both still had waiters. */
export interface Share {
  heavy: number;
  light: number;
  /** heavy ÷ (heavy + light). */
  heavyShare: number;
}

/**
 * Grants of two fairness keys up to the last grant of whichever key ran out of waiters first (a key
 * is granted its last waiter when it has none left), and the heavier key's share of them.
 */
export function shareWhileBothWait(log: readonly SlotLogEntry[], heavyKey: string, lightKey: string): Share {
  const of = (key: string) => log.filter((e) => e.fairnessKey === key).map((e) => e.seq);
  const heavySeqs = of(heavyKey);
  const lightSeqs = of(lightKey);
  const cutoff = Math.min(Math.max(...heavySeqs), Math.max(...lightSeqs));
  const heavy = heavySeqs.filter((seq) => seq <= cutoff).length;
  const light = lightSeqs.filter((seq) => seq <= cutoff).length;
  return { heavy, light, heavyShare: heavy + light ? heavy / (heavy + light) : 0 };
}
