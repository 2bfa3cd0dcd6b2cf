/**
 * The account's slots on the local stack (docs/decisions/account-slots.md): every part its own process,
 * stub renders held `stubHoldMs`, every batch and pipeline started by the real CLI as a user starts it.
 *
 * On a stack whose service runs 2 jobs at once per model, reelflow told caps of 6 and 2 per model
 * (REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY):
 *  1. a three-step pipeline `reelflow run --priority 1` alone: its span (history start → close);
 *  2. a `flowItems`-item three-step batch; its makespan on the service's clocks (first submit received →
 *     last job completed) ÷ the flow-shop ideal from the same clocks (bench/lib/slot-figures.ts). The
 *     same priority-1 pipeline is started `rushAfterMs` after the batch's first submit: its span against
 *     2 × its span alone + 2 s;
 *  3. two one-step batches of `weightedItems` started together, `--fairness-weight 1` and `3`: the
 *     heavier one's share of the long-form grants (the route store's slot log) while both had waiters.
 * On stacks whose service runs `providerCap` jobs at once per model, reelflow told `providerCap` a model (the
 * provider's limit is the account's): one-step batches, the slots' busy fraction at the service while items
 * waited, and the time from a slot freed to the next submit — `compareItems` items with the slots freed by
 * the pipelines' settles alone, as many with the bridge freeing them at the job's webhook too (both in the
 * same run), then `providerItems` items as shipped. In both, the process that frees a slot submits the
 * waiting job itself (its submit kept beside its place in the queue), unless the service is not told to
 * honour Idempotency-Key (REELFLOW_SERVICE_IDEMPOTENCY=unknown): then the waiter's workflow submits it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { openSqliteRouteStore } from '../src/routing';
import type { SlotLogEntry } from '../src/routing/slot-store';
import type { BatchProgress } from '../src/workflows/batch-types';
import { maxJobsInFlight } from '../test/helpers/jobs-in-flight';
import { jsonOf, runCli, type CliRun } from './lib/cli';
import { ONE_STEP, THREE_STEPS, writeCsv, writeMediaFiles, writeSpecFile } from './lib/cli-inputs';
import { historySpanMs } from './lib/history-times';
import { LONG_FORM, REVOICE, UPSCALE } from './lib/shapes';
import {
  busyFraction,
  endedJobs,
  flowShopIdeal,
  handOnTimes,
  makespanMs,
  shareWhileBothWait,
  type EndedJob,
  type HandOnTimes,
  type Stage,
} from './lib/slot-figures';
import { BENCH_API_KEY, startBenchStack, type BenchStack } from './lib/stack';
import { round } from './lib/stats';

export interface SchedulingStackSize {
  stubHoldMs: number;
  /** Items of the three-step batch measured against the flow-shop ideal. */
  flowItems: number;
  /** The priority-1 pipeline starts this long after the batch's first submit. */
  rushAfterMs: number;
  /** Items of each of the two weighted one-step batches. */
  weightedItems: number;
  /** Items of the provider-bound one-step batch. */
  providerItems: number;
  /** Items of each side of the comparison of who frees a finished job's slot (the settle alone, the bridge too). */
  compareItems: number;
  /** Slots a model of the provider-bound run (reelflow's cap and the service's concurrency alike). */
  providerCap: number;
  /** `--concurrency` of the provider-bound batch (items in flight, most of them waiting for a slot). */
  providerWindow: number;
}

export const SCHEDULING_STACK_FULL: SchedulingStackSize = {
  stubHoldMs: 1_000,
  flowItems: 40,
  rushAfterMs: 5_000,
  weightedItems: 24,
  providerItems: 10_000,
  compareItems: 1_000,
  providerCap: 8,
  providerWindow: 64,
};
export const SCHEDULING_STACK_QUICK: SchedulingStackSize = {
  stubHoldMs: 200,
  flowItems: 8,
  rushAfterMs: 500,
  weightedItems: 8,
  providerItems: 40,
  compareItems: 24,
  providerCap: 4,
  providerWindow: 16,
};

/** The caps of the flow-shop stack: 6 for the account, 2 a model (the service's own concurrency). */
const FLOW_CAPS = { account: 6, perModel: 2 };
const MODELS = [LONG_FORM, REVOICE, UPSCALE] as const;

export interface SchedulingStackResult {
  size: SchedulingStackSize;
  flowShop: {
    makespanMs: number;
    idealMs: number;
    busiest: string;
    ratio: number;
    /** Most jobs in flight at the service at once: all models, and per model. */
    mostInFlight: { account: number; perModel: Record<string, number> };
    target: { ratioAtMost: number; met: boolean };
  };
  priority: {
    aloneMs: number;
    duringBatchMs: number;
    boundMs: number;
    target: { met: boolean };
  };
  fairness: {
    heavy: number;
    light: number;
    heavyShare: number;
    target: { share: number; within: number; met: boolean };
  };
  providerBound: {
    /** `compareItems` each: slots freed by the pipelines' settles alone, and by the bridge too. */
    comparison: { settleOnly: ProviderRun; bridge: ProviderRun };
    shipped: ProviderRun;
    target: { busyAtLeast: number; met: boolean };
  };
}

/** The specs and media the CLI runs: the batches' items and the priority-1 pipeline (alone, and during a batch). */
function writeInputs(dir: string): void {
  writeMediaFiles(dir);
  writeSpecFile(dir, 'three-step', THREE_STEPS);
  writeSpecFile(dir, 'one-step', ONE_STEP);
  writeSpecFile(dir, 'rush-alone', THREE_STEPS);
  writeSpecFile(dir, 'rush', THREE_STEPS);
}

/** The jobs of the items named `<prefix>-<n>` (their Idempotency-Keys begin `reelflow:<prefix>-`). */
const jobsOfItems = (jobs: EndedJob[], prefix: string) =>
  jobs.filter((j) => j.idempotencyKey?.startsWith(`reelflow:${prefix}-`));

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The whole slot log of the stack's route store, oldest first. */
async function slotLog(stack: BenchStack): Promise<SlotLogEntry[]> {
  const store = openSqliteRouteStore(stack.routeStore.replace(/^sqlite:/, ''));
  try {
    const entries: SlotLogEntry[] = [];
    for (;;) {
      const page = await store.slots.log(entries.at(-1)?.seq ?? 0, 5_000);
      if (page.length === 0) return entries;
      entries.push(...page);
    }
  } finally {
    await store.close();
  }
}

/** Runs a CLI command that must exit 0 (a batch: complete every item). */
async function mustRun(args: string[], env: Record<string, string>, dir: string, timeoutMs: number): Promise<CliRun> {
  const run = await runCli(args, env, dir, timeoutMs);
  if (run.code !== 0) throw new Error(`reelflow ${args.join(' ')} exited ${run.code}:\n${run.stderr.slice(-3000)}`);
  if (args[0] === 'batch') {
    const progress = jsonOf<BatchProgress>(run, `reelflow ${args[0]}`);
    if (progress.status !== 'completed' || progress.failed > 0)
      throw new Error(`reelflow ${args.join(' ')}: ${progress.status}, ${progress.failed} failed`);
  }
  return run;
}

interface StackRun {
  stack: BenchStack;
  client: Client;
  env: Record<string, string>;
  connection: Connection;
}

/**
 * A stack with the account's `caps` given to the worker and, when `bridgeFrees`, to the bridge too (it then
 * frees a finished job's slot at its webhook; without, only the pipeline's settle frees it).
 */
async function openStack(
  name: string,
  dir: string,
  hold: number,
  serviceConcurrency: number,
  caps: NodeJS.ProcessEnv,
  bridgeFrees = true,
): Promise<StackRun> {
  const mediaStore = `file://${path.join(dir, name, 'media')}`;
  const stack = await startBenchStack({
    name,
    render: 'stub',
    stubHoldMs: hold,
    serviceConcurrency,
    bridge: true,
    worker: true,
    workerEnv: { REELFLOW_MEDIA_STORE: mediaStore, ...caps },
    ...(bridgeFrees ? { bridgeEnv: caps } : {}),
  });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const env = {
    TEMPORAL_ADDRESS: stack.temporalAddress,
    REELFLOW_TASK_QUEUE: stack.taskQueue,
    REELFLOW_SERVICE_URL: stack.serviceUrl,
    REELFLOW_API_KEY: BENCH_API_KEY,
    REELFLOW_MEDIA_STORE: mediaStore,
    REELFLOW_STATE_DIR: path.join(dir, name, 'state'),
  };
  return { stack, connection, client: new Client({ connection }), env };
}

async function closeStack(run: StackRun): Promise<void> {
  await run.connection.close();
  await run.stack.stop();
}

const perModelCaps = (cap: number) => MODELS.map((model) => `${model}=${cap}`).join(',');

/** Phases 1–3 on the flow-shop stack. */
async function flowPhases(
  size: SchedulingStackSize,
  dir: string,
  log: (line: string) => void,
): Promise<Pick<SchedulingStackResult, 'flowShop' | 'priority' | 'fairness'>> {
  const run = await openStack('slots-flow', dir, size.stubHoldMs, FLOW_CAPS.perModel, {
    REELFLOW_ACCOUNT_CONCURRENCY: String(FLOW_CAPS.account),
    REELFLOW_MODEL_CONCURRENCY: perModelCaps(FLOW_CAPS.perModel),
  });
  const { stack, client, env } = run;
  try {
    const rush = ['run', '--priority', '1', '--json'];
    await mustRun([...rush, 'rush-alone.json'], env, dir, 120_000);
    const aloneMs = await historySpanMs(client, 'pipeline/rush-alone');
    log(`  priority-1 pipeline alone: ${round(aloneMs / 1000, 2)} s`);

    const csv = writeCsv(dir, 'flow', 'three-step', size.flowItems);
    const timeout = 600_000 + size.flowItems * size.stubHoldMs * 3;
    const batch = mustRun(
      ['batch', csv, '--name', 'flow', '--concurrency', String(size.flowItems), '--json'],
      env,
      dir,
      timeout,
    );
    while (!(await stack.clocks()).jobs.some((j) => j.idempotencyKey?.startsWith('reelflow:flow-'))) await pause(50);
    await pause(size.rushAfterMs);
    await mustRun([...rush, 'rush.json'], env, dir, timeout);
    await batch;
    const duringBatchMs = await historySpanMs(client, 'pipeline/rush');
    const boundMs = 2 * aloneMs + 2_000;

    const jobs = endedJobs((await stack.clocks()).jobs);
    const flowJobs = jobsOfItems(jobs, 'flow');
    const stages: Stage[] = MODELS.map((model) => ({ model, slots: FLOW_CAPS.perModel }));
    const ideal = flowShopIdeal(flowJobs, stages);
    const makespan = makespanMs(flowJobs);
    const ratio = round(makespan / ideal.idealMs, 3);
    const perModel = Object.fromEntries(
      MODELS.map((m) => [m, maxJobsInFlight(jobs.filter((j) => j.model === m).map(asSpan))]),
    );
    log(
      `  ${size.flowItems}-item three-step batch: ${round(makespan / 1000, 2)} s ÷ flow-shop ideal ${round(ideal.idealMs / 1000, 2)} s = ${ratio} (target ≤ 1.15); ` +
        `priority-1 pipeline during it ${round(duringBatchMs / 1000, 2)} s (bound ${round(boundMs / 1000, 2)} s)`,
    );

    const items = String(size.weightedItems);
    const weighted = (name: string, weight: string) =>
      mustRun(
        [
          'batch',
          writeCsv(dir, name, 'one-step', size.weightedItems),
          '--name',
          name,
          '--concurrency',
          items,
          '--fairness-weight',
          weight,
          '--json',
        ],
        env,
        dir,
        timeout,
      );
    await Promise.all([weighted('light', '1'), weighted('heavy', '3')]);
    const share = shareWhileBothWait(
      (await slotLog(stack)).filter((e) => e.model === LONG_FORM),
      'batch/heavy',
      'batch/light',
    );
    log(
      `  weights 1 and 3: ${share.heavy} : ${share.light} grants while both waited, heavier share ${round(share.heavyShare, 3)} (target 0.75 ± 0.10)`,
    );
    return {
      flowShop: {
        makespanMs: makespan,
        idealMs: round(ideal.idealMs, 0),
        busiest: ideal.busiest,
        ratio,
        mostInFlight: { account: maxJobsInFlight(jobs.map(asSpan)), perModel },
        target: { ratioAtMost: 1.15, met: ratio <= 1.15 },
      },
      priority: { aloneMs, duringBatchMs, boundMs, target: { met: duringBatchMs <= boundMs } },
      fairness: {
        ...share,
        heavyShare: round(share.heavyShare, 3),
        target: { share: 0.75, within: 0.1, met: Math.abs(share.heavyShare - 0.75) <= 0.1 },
      },
    };
  } finally {
    await closeStack(run);
  }
}

/** A job's span at the service for maxJobsInFlight (from its submit's arrival). */
const asSpan = (j: EndedJob) => ({ submittedAt: j.receivedAt, completedAt: j.completedAt });

/** One provider-bound run: how busy the slots stayed and what a hand-on took. */
export interface ProviderRun {
  items: number;
  cap: number;
  /** Whether the bridge freed finished jobs' slots (else only the pipelines' settles did). */
  bridgeFrees: boolean;
  wallSeconds: number;
  itemsPerSecond: number;
  busy: number;
  busyWindowSeconds: number;
  handOn: HandOnTimes;
}

/** Phase 4: a provider-bound one-step batch of `items` on a stack of its own. */
async function providerRun(
  size: SchedulingStackSize,
  dir: string,
  items: number,
  bridgeFrees: boolean,
  log: (line: string) => void,
): Promise<ProviderRun> {
  const name = `slots-provider-${bridgeFrees ? 'bridge' : 'settle'}-${items}`;
  const caps = { REELFLOW_MODEL_CONCURRENCY: perModelCaps(size.providerCap) };
  const run = await openStack(name, dir, size.stubHoldMs, size.providerCap, caps, bridgeFrees);
  try {
    const prefix = `p${items}${bridgeFrees ? 'b' : 's'}`;
    const csv = writeCsv(dir, prefix, 'one-step', items);
    const expectedMs = (items / size.providerCap) * size.stubHoldMs;
    log(
      `  ${items}-item provider-bound batch, ${size.providerCap} slots, slots freed by ${bridgeFrees ? 'the bridge' : 'the settle alone'} (about ${round(expectedMs / 60_000, 1)} min)…`,
    );
    const batch = await mustRun(
      ['batch', csv, '--name', prefix, '--concurrency', String(size.providerWindow), '--json'],
      run.env,
      dir,
      600_000 + 3 * expectedMs,
    );
    const jobs = jobsOfItems(endedJobs((await run.stack.clocks()).jobs), prefix);
    const busy = busyFraction(jobs, size.providerCap);
    const handOn = handOnTimes(await slotLog(run.stack), jobs);
    log(
      `  busy ${round(busy.busy, 4)} over ${round(busy.windowMs / 1000, 1)} s; ` +
        `slot freed → next submit p50 ${handOn.freedToSubmit.p50} ms, p99 ${handOn.freedToSubmit.p99} ms; ` +
        `job completed → next submit p50 ${handOn.completedToSubmit.p50} ms, p99 ${handOn.completedToSubmit.p99} ms ` +
        `(completed → webhook sent p50 ${handOn.completedToWebhook.p50} ms, sent → slot freed p50 ${handOn.webhookToFreed.p50} ms; ${handOn.handOns} hand-ons)`,
    );
    return {
      items,
      cap: size.providerCap,
      bridgeFrees,
      wallSeconds: round(batch.seconds, 1),
      itemsPerSecond: round(items / batch.seconds, 2),
      busy: round(busy.busy, 4),
      busyWindowSeconds: round(busy.windowMs / 1000, 1),
      handOn,
    };
  } finally {
    await closeStack(run);
  }
}

/**
 * Phase 4: the slots freed by the settle alone against freed by the bridge too (`compareItems` each, one
 * after the other), then the `providerItems` batch as shipped (the bridge freeing).
 */
async function providerPhase(
  size: SchedulingStackSize,
  dir: string,
  log: (line: string) => void,
): Promise<SchedulingStackResult['providerBound']> {
  const settleOnly = await providerRun(size, dir, size.compareItems, false, log);
  const bridge = await providerRun(size, dir, size.compareItems, true, log);
  const shipped = await providerRun(size, dir, size.providerItems, true, log);
  log(
    `  provider-bound ${size.providerItems} items: busy ${shipped.busy} (target ≥ 0.97); at ${size.compareItems} items the settle alone ${settleOnly.busy}, the bridge too ${bridge.busy}`,
  );
  return { comparison: { settleOnly, bridge }, shipped, target: { busyAtLeast: 0.97, met: shipped.busy >= 0.97 } };
}

/** Runs the local-stack scheduling measurements (two stacks, one after the other). */
export async function runSchedulingStack(
  size: SchedulingStackSize,
  log: (line: string) => void,
): Promise<SchedulingStackResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-slots-stack-'));
  try {
    writeInputs(dir);
    const flow = await flowPhases(size, dir, log);
    const providerBound = await providerPhase(size, dir, log);
    return { size, ...flow, providerBound };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
