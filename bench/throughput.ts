/**
 * Throughput ceilings, found by climbing. One stack (every part its own process), the service in stub
 * render mode with no hold (so the service's work per job is a hard link, not a render):
 *  - raw: a workflow of three trivial activities in sequence (bench/procs/raw.workflows.ts) on its own
 *    worker process and task queue, same Temporal server and flags;
 *  - reelflow: the canonical three-step pipeline (long-form → re-voice → upscale) through the real
 *    webhook path.
 * Each climbs independently: closed loop at concurrency 1, 2, 4, … until the rate has risen by less
 * than 10 % over the best so far at two levels in a row (or `maxLevel`). Rate = runs ended inside the window ÷ window; the loads are
 * their own driver processes. Then `cpuPairs` pairs of levels at both peaks (raw, then reelflow) for the
 * CPU ratio, and one row with real ffmpeg renders (a fresh stack) at `realConcurrency`.
 */
import { randomUUID } from 'node:crypto';
import { drivePipelines } from './lib/drive';
import { cpuMeter, orchestrationCpu, stackPids, type OrchestrationCpu } from './lib/cpu';
import { startBenchStack, type BenchStack, type JobClocks } from './lib/stack';
import { percentile, round } from './lib/stats';
import { handoffsOf } from './lib/hops';

export interface ThroughputSize {
  reelflowWindowS: number;
  rawWindowS: number;
  maxLevel: number;
  realWindowS: number;
  realConcurrency: number;
  /** Raw and reelflow levels run again at their peaks, alternating, for the CPU ratio (bench/lib/cpu.ts). */
  cpuPairs: number;
}

export const THROUGHPUT_FULL: ThroughputSize = {
  reelflowWindowS: 12,
  rawWindowS: 6,
  maxLevel: 64,
  realWindowS: 20,
  realConcurrency: 2,
  cpuPairs: 3,
};
export const THROUGHPUT_QUICK: ThroughputSize = {
  reelflowWindowS: 3,
  rawWindowS: 2,
  maxLevel: 2,
  realWindowS: 0,
  realConcurrency: 1,
  cpuPairs: 1,
};

export interface Level {
  concurrency: number;
  perSecond: number;
  completed: number;
  failed: number;
  latencyMs: { p50: number; p90: number };
  /** reelflow only, service clock, mean per pipeline: job time at the service and hand-off time. */
  serviceMsPerPipeline?: number;
  handoffMsPerPipeline?: number;
  /** CPU ms per completed run of each stack process over the level (bench/lib/cpu.ts). */
  cpuMsPerRun?: Record<string, number>;
}

/** One closed-loop level of `kind` runs at `concurrency` for `windowS` seconds, from its own driver process. */
export async function level(
  stack: BenchStack,
  kind: 'pipeline' | 'raw',
  concurrency: number,
  windowS: number,
): Promise<Level> {
  const before = kind === 'pipeline' ? await stack.clocks() : null;
  const prefix = `tp-${kind}-c${concurrency}-${randomUUID().slice(0, 6)}`;
  const cpu = cpuMeter(stackPids(stack));
  const result = await drivePipelines(prefix, {
    temporalAddress: stack.temporalAddress,
    taskQueue: kind === 'raw' ? stack.rawTaskQueue : stack.taskQueue,
    kind,
    shape: { type: 'three-step' },
    serviceUrl: stack.serviceUrl,
    mode: 'closed-loop',
    concurrency,
    windowSeconds: windowS,
    prefix,
  });
  const latencies = result.runs
    .filter((r) => r.ok)
    .map((r) => r.endedAt - r.startedAt)
    .sort((a, b) => a - b);
  const out: Level = {
    concurrency,
    perSecond: round((result.counted ?? 0) / (result.windowSeconds ?? windowS), 2),
    completed: result.counted ?? 0,
    failed: result.runs.filter((r) => !r.ok).length,
    latencyMs: { p50: percentile(latencies, 50), p90: percentile(latencies, 90) },
    // Over the whole level (runs still in flight at the window's close included): an upper bound per run.
    cpuMsPerRun: cpu(result.runs.filter((r) => r.ok).length),
  };
  if (before) {
    const after = await stack.clocks();
    const known = new Set(before.jobs.map((j) => j.id));
    const jobs: JobClocks[] = after.jobs.filter((j) => !known.has(j.id) && j.completedAt);
    const all = new Map(after.jobs.map((j) => [j.id, j]));
    const pipelines = Math.max(1, jobs.length / 3);
    out.serviceMsPerPipeline = Math.round(jobs.reduce((n, j) => n + (j.completedAt! - j.receivedAt), 0) / pipelines);
    out.handoffMsPerPipeline = Math.round(handoffsOf(jobs, all).reduce((n, v) => n + v, 0) / pipelines);
  }
  return out;
}

/**
 * Climbs concurrency 1, 2, 4, … until the rate has stopped rising by 10 % over the best so far, at two
 * levels in a row (one level can dip on a shared machine; two in a row is a plateau).
 */
export async function climb(
  stack: BenchStack,
  kind: 'pipeline' | 'raw',
  windowS: number,
  maxLevel: number,
  log: (line: string) => void,
): Promise<Level[]> {
  const levels: Level[] = [];
  let best = 0;
  let flat = 0;
  for (let c = 1; c <= maxLevel; c *= 2) {
    const row = await level(stack, kind, c, windowS);
    levels.push(row);
    log(`  ${kind} c=${c}: ${row.perSecond}/s${row.failed ? ` (${row.failed} failed)` : ''}`);
    flat = c > 1 && row.perSecond < best * 1.1 ? flat + 1 : 0;
    best = Math.max(best, row.perSecond);
    if (flat >= 2) break;
  }
  return levels;
}

/** The level with the highest rate. */
export const peakOf = (levels: Level[]) => levels.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));

export interface ThroughputResult {
  size: ThroughputSize;
  raw: Level[];
  reelflow: Level[];
  peaks: { raw: Level; reelflow: Level; ratio: number };
  /** reelflow ÷ raw at each concurrency both measured. */
  ratioAtEqualConcurrency: Array<{ concurrency: number; ratio: number }>;
  /**
   * The CPU ratio from levels run after the climbs at both peaks, raw then reelflow, `cpuPairs` times:
   * a pair shares the machine's state of the moment, which the climbs, minutes apart, do not.
   */
  cpuPairs?: OrchestrationCpu[];
  /** One level with real ffmpeg renders (null in quick mode). */
  realRenders: Level | null;
  statusCalls: number;
}

/**
 * Runs the throughput bench (stub renders, then one real-render level on a fresh stack), on its own dev
 * server unless `temporalAddress` is given.
 */
export async function runThroughput(
  size: ThroughputSize,
  log: (line: string) => void,
  temporalAddress?: string,
): Promise<ThroughputResult> {
  const stack = await startBenchStack({
    name: 'throughput',
    render: 'stub',
    stubHoldMs: 0,
    bridge: true,
    worker: true,
    rawWorker: true,
    temporalAddress,
  });
  let raw: Level[];
  let reelflow: Level[];
  let statusCalls: number;
  const cpuPairs: OrchestrationCpu[] = [];
  try {
    // Warm-up (not counted).
    await level(stack, 'raw', 2, 1);
    await level(stack, 'pipeline', 2, 2);
    raw = await climb(stack, 'raw', size.rawWindowS, size.maxLevel, log);
    reelflow = await climb(stack, 'pipeline', size.reelflowWindowS, size.maxLevel, log);
    for (let pair = 0; pair < size.cpuPairs; pair += 1) {
      const rawLevel = await level(stack, 'raw', peakOf(raw).concurrency, size.rawWindowS);
      const reelflowLevel = await level(stack, 'pipeline', peakOf(reelflow).concurrency, size.reelflowWindowS);
      const measured = orchestrationCpu(reelflowLevel.cpuMsPerRun ?? {}, rawLevel.cpuMsPerRun ?? {});
      cpuPairs.push(measured);
      log(
        `  CPU pair ${pair + 1}: orchestration ${measured.orchestrationMs} ms vs raw ${measured.rawMs} ms per run (${measured.ratio})`,
      );
    }
    statusCalls = (await stack.clocks()).counters.statusCalls;
  } finally {
    await stack.stop();
  }
  let realRenders: Level | null = null;
  if (size.realWindowS > 0) {
    const real = await startBenchStack({
      name: 'throughput-real',
      render: 'ffmpeg',
      bridge: true,
      worker: true,
      temporalAddress,
    });
    try {
      await level(real, 'pipeline', 1, 1);
      realRenders = await level(real, 'pipeline', size.realConcurrency, size.realWindowS);
      log(`  reelflow with real renders c=${size.realConcurrency}: ${realRenders.perSecond}/s`);
    } finally {
      await real.stop();
    }
  }
  const peaks = { raw: peakOf(raw), reelflow: peakOf(reelflow), ratio: 0 };
  peaks.ratio = round(peaks.reelflow.perSecond / peaks.raw.perSecond, 4);
  const ratioAtEqualConcurrency = reelflow
    .map((r) => ({ r, w: raw.find((x) => x.concurrency === r.concurrency) }))
    .filter((p) => p.w)
    .map(({ r, w }) => ({ concurrency: r.concurrency, ratio: round(r.perSecond / w!.perSecond, 4) }));
  return { size, raw, reelflow, peaks, ratioAtEqualConcurrency, cpuPairs, realRenders, statusCalls };
}
