/**
 * Hand-off latency and status calls per job. Every part is its own process (bench/lib/stack.ts): the
 * service in stub render mode (each job held `holdMs`, no ffmpeg), the bridge, the worker, and the
 * load generators (pipelines driver, naive client). Three modes, one after the other on one stack:
 *  - reelflow webhook path (service → bridge → Temporal → next submit);
 *  - reelflow polling fallback (endpoint deleted; each step's first poll at the job length, ×2, cap 4×);
 *  - the naive client (submit, poll every 500 ms from a random phase, fetch, submit the next).
 * Each mode runs uncontended (one chain at a time, `aloneRounds` in a row) and then `chains` chains at
 * once. A chain is a long-form generation followed by `revoices` re-voicings of the previous output.
 * A hand-off is measured on the service's clock: the job's `completedAt` → the next job's `receivedAt`
 * (the next job is the one whose `video_url` names the earlier job's output), so no client-side clock
 * and no workflow internals.
 */
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { MODELS } from '../src/contract';
import { pollOffsetSeconds, resolvePacing } from '../src/pipeline-spec';
import { driveNaive, drivePipelines } from './lib/drive';
import { BENCH_API_KEY, startBenchStack, type BenchStack } from './lib/stack';
import { summarize, round, type Summary } from './lib/stats';
import { UPSCALE } from './lib/shapes';
import { measureFirstSubmit, type FirstSubmitResult } from './first-submit';
import { handoffsOf, hopBreakdowns, type HopBreakdown } from './lib/hops';
import {
  ARCHIVE_HANDOFF_FULL,
  ARCHIVE_HANDOFF_QUICK,
  runArchiveHandoff,
  type ArchiveHandoffResult,
  type ArchiveHandoffSize,
} from './archive-handoff';
import { cpuMeter, stackPids } from './lib/cpu';
import { startProcess, tsNode } from './lib/processes';
import { pipelineWorkflowId } from '../src/workflows/definitions';

export interface HandoffSize {
  holdMs: number;
  revoices: number;
  chains: number;
  /** Chains of the uncontended run (1). */
  alone: number;
  /**
   * Uncontended chains run one after another (default 1): as many hand-offs as the floor probe's beside
   * them, so that the two p50s compare like with like (a spec has at most 20 steps).
   */
  aloneRounds?: number;
  /** `reelflow run` → first submit measurements per entry point (bench/first-submit.ts). */
  firstSubmitRuns: number;
  /** Hand-offs of the floor probe (bench/handoff-floor) run beside, on the same server. */
  floorHandOffs: number;
  /** The hand-off as users run it, by archive mode (bench/archive-handoff.ts). */
  archive: ArchiveHandoffSize;
}

export const HANDOFF_FULL: HandoffSize = {
  holdMs: 500,
  revoices: 10,
  chains: 20,
  alone: 1,
  aloneRounds: 4,
  firstSubmitRuns: 7,
  floorHandOffs: 40,
  archive: ARCHIVE_HANDOFF_FULL,
};
export const HANDOFF_QUICK: HandoffSize = {
  holdMs: 200,
  revoices: 2,
  chains: 3,
  alone: 1,
  firstSubmitRuns: 1,
  floorHandOffs: 10,
  archive: ARCHIVE_HANDOFF_QUICK,
};
export const NAIVE_POLL_MS = 500;

type Mode = 'webhook' | 'polling' | 'naive';

interface PhaseResult {
  handoffs: number[];
  /** submit received → job created (validation + pricing), per job. */
  pricingMs: number[];
  jobs: number;
  statusCalls: number;
  failed: number;
  /** The phase's pipelines (none for the naive client). */
  workflowIds: string[];
  /** CPU ms per hand-off of each stack process over the phase (bench/lib/cpu.ts). */
  cpuMsPerHandoff: Record<string, number>;
}

/** `chains` chains at once, `rounds` times one after another. */
async function phase(
  stack: BenchStack,
  mode: Mode,
  chains: number,
  rounds: number,
  size: HandoffSize,
): Promise<PhaseResult> {
  const before = await stack.clocks();
  const known = new Set(before.jobs.map((j) => j.id));
  const cpu = cpuMeter(stackPids(stack));
  let failed = 0;
  const workflowIds: string[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const prefix = `ho-${mode}-${chains}-${randomUUID().slice(0, 6)}`;
    if (mode === 'naive') {
      await driveNaive(prefix, {
        serviceUrl: stack.serviceUrl,
        apiKey: BENCH_API_KEY,
        chains,
        revoices: size.revoices,
        pollMs: NAIVE_POLL_MS,
      });
      continue;
    }
    const shape = {
      type: 'chain' as const,
      revoices: size.revoices,
      ...(mode === 'polling' ? { pollFirstSeconds: size.holdMs / 1000 } : {}),
    };
    const result = await drivePipelines(prefix, {
      temporalAddress: stack.temporalAddress,
      taskQueue: stack.taskQueue,
      kind: 'pipeline',
      shape,
      serviceUrl: stack.serviceUrl,
      mode: 'batch',
      count: chains,
      prefix,
    });
    const notOk = result.runs.filter((r) => !r.ok);
    failed += notOk.length;
    if (notOk.length) console.log(`  ${mode}: ${notOk.length} pipelines did not complete: ${notOk[0]?.error}`);
    workflowIds.push(...Array.from({ length: chains }, (_, i) => pipelineWorkflowId(`${prefix}-${i}`)));
  }
  const after = await stack.clocks();
  const jobs = after.jobs.filter((j) => !known.has(j.id));
  const all = new Map(after.jobs.map((j) => [j.id, j]));
  const handoffs = handoffsOf(jobs, all);
  return {
    handoffs,
    cpuMsPerHandoff: cpu(handoffs.length),
    pricingMs: jobs.map((j) => j.submittedAt - j.receivedAt),
    jobs: jobs.length,
    statusCalls: after.counters.statusCalls - before.counters.statusCalls,
    failed,
    workflowIds,
  };
}

/** Polls reelflow's default pacing makes for a job of `seconds` (up to the first at/after completion). */
function defaultPacingPolls(seconds: number): number {
  const pacing = resolvePacing(MODELS[UPSCALE].expectedRunSeconds);
  let k = 0;
  while (pollOffsetSeconds(pacing, k) < seconds) k += 1;
  return k + 1;
}

export interface HandoffResult {
  size: HandoffSize;
  naivePollMs: number;
  latencyMs: Record<'alone' | 'contended', Record<Mode, Summary>>;
  /** Every hand-off (ms), for the CDF chart. */
  samples: Record<'alone' | 'contended', Record<Mode, number[]>>;
  pricingMs: Record<Mode, Summary>;
  statusCallsPerJob: Record<string, Record<Mode, number> & { note: string }>;
  ratios: Record<string, number>;
  failedPipelines: number;
  /** `reelflow run` → first submit received (absent in runs older than the measurement). */
  firstSubmit?: FirstSubmitResult;
  /** CPU ms per hand-off of each stack process, per phase (`alone/webhook`, `contended/naive`, …). */
  cpuMsPerHandoff?: Record<string, Record<string, number>>;
  /** Webhook hand-offs hop by hop (bench/lib/hops.ts), alone and contended. */
  hops?: Record<'alone' | 'contended', HopBreakdown>;
  /** The floor probe beside the uncontended phase: signal sent → the activity's POST received, ms. */
  floor?: { latencyMs: Summary; samples: number[] };
  /**
   * The floor probe under the contended phases' offered load (`chains` chains at once, `holdMs` before
   * each signal), after them on the same server: with an activity, and with a local activity (the
   * benches' worker submits as one). What no design that signals the pipeline can beat here.
   */
  floorContended?: Record<'activity' | 'localActivity', { latencyMs: Summary; samples: number[] }>;
  /** `reelflow run` with the CLI's default archive mode beside `archive: never` (dev server runs only). */
  asUsersRunIt?: ArchiveHandoffResult;
}

/**
 * The floor probe (bench/handoff-floor: signal → activity → loopback POST, nothing else) against the
 * stack's Temporal server, in its own process: the least a hand-off can cost on this machine now.
 */
async function measureFloor(
  temporalAddress: string,
  handOffs: number,
  load: { chains: number; holdMs: number; localActivity: boolean } = { chains: 1, holdMs: 0, localActivity: false },
): Promise<number[]> {
  const [command, args] = tsNode(path.join(__dirname, 'handoff-floor', 'run.ts'), '--json');
  const probe = await startProcess('handoff-floor', command, args, {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: temporalAddress,
      FLOOR_HAND_OFFS: String(handOffs),
      FLOOR_CHAINS: String(load.chains),
      FLOOR_HOLD_MS: String(load.holdMs),
      ...(load.localActivity ? { WF: 'local' } : {}),
    },
  });
  const code = await probe.exited;
  const line = /^FLOOR (.*)$/m.exec(probe.output());
  if (code !== 0 || !line) throw new Error(`the floor probe exited ${code}:\n${probe.output().slice(-2000)}`);
  return (JSON.parse(line[1]!) as { samples: number[] }).samples;
}

/**
 * Runs the hand-off bench on its own stack (on its own dev server unless `temporalAddress` is given),
 * then, on a dev server, the hand-off as users run it by archive mode on a stack of its own.
 */
export async function runHandoff(
  size: HandoffSize,
  log: (line: string) => void,
  temporalAddress?: string,
): Promise<HandoffResult> {
  const result = await runHandoffPhases(size, log, temporalAddress);
  if (temporalAddress) return result;
  const asUsersRunIt = await runArchiveHandoff(size.archive, log);
  log(
    `  as users run it (30 s 720p): hand-off p50 ${asUsersRunIt.handoffMs['on-expiry-risk'].p50} ms (on-expiry-risk) vs ${asUsersRunIt.handoffMs.never.p50} ms (never), ratio ${asUsersRunIt.ratio}`,
  );
  return { ...result, asUsersRunIt };
}

async function runHandoffPhases(
  size: HandoffSize,
  log: (line: string) => void,
  temporalAddress?: string,
): Promise<HandoffResult> {
  const stack = await startBenchStack({
    name: 'handoff',
    render: 'stub',
    stubHoldMs: size.holdMs,
    bridge: true,
    worker: true,
    temporalAddress,
  });
  try {
    // Warm-up (not counted): fixtures rendered, bundles loaded, connections open.
    await drivePipelines('ho-warm', {
      temporalAddress: stack.temporalAddress,
      taskQueue: stack.taskQueue,
      kind: 'pipeline',
      shape: { type: 'chain', revoices: 1 },
      serviceUrl: stack.serviceUrl,
      mode: 'batch',
      count: 2,
      prefix: `ho-warm-${randomUUID().slice(0, 6)}`,
    });
    const firstSubmit = await measureFirstSubmit(stack, size.firstSubmitRuns);
    log(
      `  reelflow run → first submit: bin/reelflow.js p50 ${firstSubmit.userCommandMs.p50} ms, node dist/cli/main.js p50 ${firstSubmit.compiledMs.p50} ms`,
    );
    const floorSamples = await measureFloor(stack.temporalAddress, size.floorHandOffs);
    const floor = { latencyMs: summarize(floorSamples), samples: floorSamples };
    log(`  floor probe beside it: p50 ${floor.latencyMs.p50} ms over ${floorSamples.length} hand-offs`);
    const runs: Record<string, PhaseResult> = {};
    for (const mode of ['webhook', 'polling', 'naive'] as const) {
      if (mode === 'polling') await stack.deleteEndpoint();
      for (const [label, chains, rounds] of [
        ['alone', size.alone, size.aloneRounds ?? 1],
        ['contended', size.chains, 1],
      ] as const) {
        const t0 = Date.now();
        runs[`${label}/${mode}`] = await phase(stack, mode, chains, rounds, size);
        log(
          `  hand-off ${mode}, ${chains} chain(s): ${runs[`${label}/${mode}`]!.handoffs.length} hand-offs in ${round((Date.now() - t0) / 1000)} s`,
        );
      }
    }
    // The same offered load as the contended phases: chains of `revoices` hand-offs after `holdMs` holds.
    const contendedFloor = async (localActivity: boolean) => {
      const load = { chains: size.chains, holdMs: size.holdMs, localActivity };
      const samples = await measureFloor(stack.temporalAddress, size.revoices, load);
      return { latencyMs: summarize(samples), samples };
    };
    const floorContended = { activity: await contendedFloor(false), localActivity: await contendedFloor(true) };
    log(
      `  floor probe under ${size.chains} chains: p50 ${floorContended.activity.latencyMs.p50} ms (activity), ${floorContended.localActivity.latencyMs.p50} ms (local activity)`,
    );
    const get = (label: 'alone' | 'contended', mode: Mode) => runs[`${label}/${mode}`]!;
    const hops = await hopBreakdowns(
      stack,
      { alone: get('alone', 'webhook').workflowIds, contended: get('contended', 'webhook').workflowIds },
      log,
    );
    const table = (label: 'alone' | 'contended') => ({
      webhook: summarize(get(label, 'webhook').handoffs),
      polling: summarize(get(label, 'polling').handoffs),
      naive: summarize(get(label, 'naive').handoffs),
    });
    const latencyMs = { alone: table('alone'), contended: table('contended') };
    const perJob = (mode: Mode) => {
      const a = get('alone', mode);
      const c = get('contended', mode);
      return round((a.statusCalls + c.statusCalls) / Math.max(1, a.jobs + c.jobs), 2);
    };
    return {
      size,
      naivePollMs: NAIVE_POLL_MS,
      latencyMs,
      samples: {
        alone: {
          webhook: get('alone', 'webhook').handoffs,
          polling: get('alone', 'polling').handoffs,
          naive: get('alone', 'naive').handoffs,
        },
        contended: {
          webhook: get('contended', 'webhook').handoffs,
          polling: get('contended', 'polling').handoffs,
          naive: get('contended', 'naive').handoffs,
        },
      },
      pricingMs: {
        webhook: summarize([...get('alone', 'webhook').pricingMs, ...get('contended', 'webhook').pricingMs]),
        polling: summarize([...get('alone', 'polling').pricingMs, ...get('contended', 'polling').pricingMs]),
        naive: summarize([...get('alone', 'naive').pricingMs, ...get('contended', 'naive').pricingMs]),
      },
      statusCallsPerJob: {
        [`chain jobs of ${size.holdMs} ms (measured)`]: {
          webhook: perJob('webhook'),
          polling: perJob('polling'),
          naive: perJob('naive'),
          note: 'service status-call counter ÷ jobs, both runs of each mode',
        },
        '60 s jobs (computed)': {
          webhook: 0,
          polling: defaultPacingPolls(60),
          naive: Math.ceil(60_000 / NAIVE_POLL_MS),
          note: 'reelflow default pacing of the upscale model (first poll at its expected 60 s, ×2, cap 300 s); naive ⌈60 / 0.5⌉',
        },
        '600 s jobs (computed)': {
          webhook: 0,
          polling: defaultPacingPolls(600),
          naive: Math.ceil(600_000 / NAIVE_POLL_MS),
          note: 'as above',
        },
      },
      ratios: {
        'naive/webhook p50 alone': round(latencyMs.alone.naive.p50 / latencyMs.alone.webhook.p50, 3),
        'naive/webhook p50 contended': round(latencyMs.contended.naive.p50 / latencyMs.contended.webhook.p50, 3),
        'naive/webhook p99 contended': round(latencyMs.contended.naive.p99 / latencyMs.contended.webhook.p99, 3),
      },
      failedPipelines: Object.values(runs).reduce((n, r) => n + r.failed, 0),
      firstSubmit,
      floor,
      floorContended,
      cpuMsPerHandoff: Object.fromEntries(Object.entries(runs).map(([key, r]) => [key, r.cpuMsPerHandoff])),
      ...(hops ? { hops } : {}),
    };
  } finally {
    await stack.stop();
  }
}
