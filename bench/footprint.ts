/**
 * Worker footprint with waiting pipelines, then the bridge under a burst of deliveries for them.
 * Every part is its own process. The service runs in stub mode with jobs held for an hour, so every
 * pipeline's job workflow waits on its webhook (the first fallback poll is due only after the
 * model's expected run time, 180 s).
 *  1. Footprint: the worker's RSS (from /proc) idle, while `n` one-step pipelines are started (by a
 *     driver process) and each submits its job, and over `windowS` once all wait; CPU in that window.
 *  2. Bridge: `generators` load-generator processes send one signed `generation.completed` delivery per
 *     waiting job (`concurrency` in flight in total) to the real bridge process (verify, append to the
 *     route store's inbox, 202 once committed; its forwarder signals the pipelines); before that, and
 *     again once those pipelines closed, the same number of deliveries to a null-sink bridge process
 *     (the same bridge code, no store) — the baseline is the mean of the two. Also measured: delivery
 *     sent → its pipeline closed (Temporal's close time), and the sustained rate into pipelines (first
 *     delivery sent → last pipeline closed).
 */
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { pipelineWorkflowId } from '../src/workflows/definitions';
import type { PipelineSummary } from '../src/workflows/pipeline-types';
import { freePort } from '../src/stack/stack-state';
import { driveDeliveries, drivePipelines } from './lib/drive';
import { sampleProcess, startProcess, tsNode } from './lib/processes';
import { startBenchStack } from './lib/stack';
import { cpuMeter, stackPids } from './lib/cpu';
import { round, summarize, type Summary } from './lib/stats';
import type { DeliveriesResult } from './procs/deliveries';

export interface FootprintSize {
  n: number;
  windowS: number;
  generators: number;
  concurrency: number;
  /** REELFLOW_MAX_CACHED_WORKFLOWS of the worker (absent: the worker's default). */
  workerCache?: number;
  /** The worker's `--max-old-space-size` (MiB; absent: Node's default). */
  workerHeapMiB?: number;
}

export const FOOTPRINT_FULL: FootprintSize = { n: 1000, windowS: 20, generators: 2, concurrency: 16 };
export const FOOTPRINT_QUICK: FootprintSize = { n: 20, windowS: 2, generators: 2, concurrency: 4 };

export interface FootprintResult {
  size: FootprintSize;
  rampSeconds: number;
  idleRssMiB: number;
  waitingRssMiB: { min: number; max: number };
  cpuPercentWhileWaiting: number;
  /** RSS against pipelines waiting, sampled every second of the ramp (for the chart). */
  ramp: Array<{ waiting: number; rssMiB: number }>;
  statusCallsInRun: number;
}

export interface BridgeResult {
  size: FootprintSize;
  /** The null sink: the mean rate of its `bursts` (one before the real bridge's burst, one after its pipelines closed). */
  baseline: {
    deliveriesPerSecond: number;
    bursts?: number[];
    answerMs: Summary;
    non202: number;
    /** CPU ms per 1,000 deliveries of each process during the null-sink bursts (their mean; `bridge` is the null sink's process); absent in older runs. */
    cpuMsPerThousand?: Record<string, number>;
  };
  bridge: {
    deliveriesPerSecond: number;
    answerMs: Summary;
    non202: number;
    deliveryToPipelineClosedMs: Summary;
    /** The sustained rate into pipelines: deliveries' pipelines closed per second, first send to last close. */
    pipelinesClosedPerSecond?: number;
    /** Pipelines closed before the burst's last answer (their signals went out during it); absent in older runs. */
    pipelinesClosedDuringBurst?: number;
    /** CPU ms per 1,000 deliveries of each stack process during the burst (bench/lib/cpu.ts); absent in older runs. */
    cpuMsPerThousand?: Record<string, number>;
  };
  ratio: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Splits `ids` over `generators` processes started together; deliveries/s over the whole burst. */
async function burst(
  name: string,
  url: string,
  secret: string,
  fileOrigin: string,
  ids: string[],
  size: FootprintSize,
) {
  const startAt = Date.now() + 1500;
  const shares = Array.from({ length: size.generators }, (_, g) => ids.filter((_, i) => i % size.generators === g));
  const results: DeliveriesResult[] = await Promise.all(
    shares.map((share, g) =>
      driveDeliveries(`${name}-${g}`, {
        url,
        secret,
        requestIds: share,
        fileOrigin,
        concurrency: Math.max(1, Math.round(size.concurrency / size.generators)),
        startAt,
      }),
    ),
  );
  const start = Math.min(...results.map((r) => r.startedAt));
  const end = Math.max(...results.map((r) => r.endedAt));
  const sentAt: Record<string, number> = Object.assign({}, ...results.map((r) => r.sentAt));
  return {
    deliveriesPerSecond: round(ids.length / ((end - start) / 1000)),
    /** Every answer's time (ms): summarized by the caller, over one burst or several. */
    answerMs: results.flatMap((r) => r.answerMs),
    non202: results.reduce((n, r) => n + r.non202, 0),
    sentAt,
    endedAt: end,
  };
}

/** Runs the footprint and bridge benches on one stack. */
export async function runFootprintAndBridge(
  size: FootprintSize,
  log: (line: string) => void,
): Promise<{ footprint: FootprintResult; bridge: BridgeResult }> {
  const stack = await startBenchStack({
    name: 'footprint',
    render: 'stub',
    stubHoldMs: 3_600_000,
    bridge: true,
    worker: true,
    workerEnv: {
      ...(size.workerCache !== undefined ? { REELFLOW_MAX_CACHED_WORKFLOWS: String(size.workerCache) } : {}),
      ...(size.workerHeapMiB !== undefined ? { NODE_OPTIONS: `--max-old-space-size=${size.workerHeapMiB}` } : {}),
    },
  });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection });
  try {
    const workerPid = stack.processes.worker!.pid;
    await sleep(2000);
    const idle = sampleProcess(workerPid);
    const prefix = `fp-${randomUUID().slice(0, 6)}`;
    const t0 = Date.now();
    const starting = drivePipelines(prefix, {
      temporalAddress: stack.temporalAddress,
      taskQueue: stack.taskQueue,
      kind: 'pipeline',
      shape: { type: 'one-step' },
      serviceUrl: stack.serviceUrl,
      mode: 'start',
      count: size.n,
      prefix,
    });
    const ramp: FootprintResult['ramp'] = [];
    for (;;) {
      const jobs = (await stack.clocks()).jobs.length;
      ramp.push({ waiting: jobs, rssMiB: sampleProcess(workerPid).rssMiB });
      if (jobs >= size.n) break;
      // Generous: on an idle 2-core machine 1000 take about a minute; a shared one can be far slower.
      if (Date.now() - t0 > 1_800_000) throw new Error(`only ${jobs}/${size.n} jobs submitted after 30 min`);
      await sleep(1000);
    }
    await starting;
    const rampSeconds = round((Date.now() - t0) / 1000);
    log(`  footprint: ${size.n} pipelines waiting after ${rampSeconds} s`);
    await sleep(2000);
    const before = sampleProcess(workerPid);
    const rss: number[] = [];
    for (let t = 0; t < size.windowS; t += 1) {
      await sleep(1000);
      rss.push(sampleProcess(workerPid).rssMiB);
    }
    const after = sampleProcess(workerPid);
    const clocks = await stack.clocks();
    ramp.push({ waiting: size.n, rssMiB: Math.max(...rss) });
    const footprint: FootprintResult = {
      size,
      rampSeconds,
      idleRssMiB: idle.rssMiB,
      waitingRssMiB: { min: Math.min(...rss), max: Math.max(...rss) },
      cpuPercentWhileWaiting: round(((after.cpuSeconds - before.cpuSeconds) / size.windowS) * 100),
      ramp,
      statusCallsInRun: clocks.counters.statusCalls,
    };

    // Bridge: the baseline (null sink), the real bridge with one delivery per waiting job, and the
    // baseline again once those pipelines closed: the two baselines bracket the real burst.
    const nullSinkBurst = async (name: string) => {
      const nullPort = await freePort();
      const [cmd, args] = tsNode(path.join(__dirname, 'procs', 'null-bridge.ts'));
      const nullBridge = await startProcess(`footprint-${name}`, cmd, args, {
        env: {
          ...process.env,
          REELFLOW_WEBHOOK_SECRETS: stack.webhookSecret!,
          BENCH_NULL_BRIDGE_PORT: String(nullPort),
        },
        ready: /null bridge listening/,
      });
      const fakeIds = Array.from({ length: size.n }, () => randomUUID());
      try {
        const url = `http://127.0.0.1:${nullPort}/webhooks`;
        // The stack's processes, with the null sink's process in the bridge's place.
        const cpu = cpuMeter({ ...stackPids(stack), bridge: nullBridge.pid }, 1);
        const result = await burst(name, url, stack.webhookSecret!, stack.serviceUrl, fakeIds, size);
        const cpuMsPerThousand = cpu(size.n / 1000);
        log(
          `  bridge baseline (null sink, ${name}): ${result.deliveriesPerSecond} deliveries/s; CPU ms per 1,000: ${JSON.stringify(cpuMsPerThousand)}`,
        );
        return { ...result, cpuMsPerThousand };
      } finally {
        await nullBridge.stop();
      }
    };
    const baselineBefore = await nullSinkBurst('bridge-null');
    const waiting = clocks.jobs.filter((j) => j.status === 'IN_PROGRESS' || j.status === 'IN_QUEUE').map((j) => j.id);
    const cpu = cpuMeter(stackPids(stack), 1);
    const real = await burst('bridge-real', stack.bridgeUrl!, stack.webhookSecret!, stack.serviceUrl, waiting, size);
    const cpuMsPerThousand = cpu(waiting.length / 1000);
    log(
      `  bridge (route store inbox): ${real.deliveriesPerSecond} acknowledged deliveries/s; CPU ms per 1,000: ${JSON.stringify(cpuMsPerThousand)}`,
    );
    // Delivery sent → the pipeline that waited on that job closed (Temporal's close time).
    const names = Array.from({ length: size.n }, (_, i) => `${prefix}-${i}`);
    const latencies: number[] = [];
    const closedTimes: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < names.length) {
          const handle = client.workflow.getHandle(pipelineWorkflowId(names[next++]!));
          const summary = (await handle.result()) as PipelineSummary;
          const requestId = summary.steps[0]?.requestIds[0];
          const closed = (await handle.describe()).closeTime?.getTime();
          const sent = requestId ? real.sentAt[requestId] : undefined;
          if (closed && sent) latencies.push(closed - sent);
          if (closed) closedTimes.push(closed);
        }
      }),
    );
    log(
      `  into pipelines beside it: ${sustainedRate(Object.values(real.sentAt), closedTimes)} pipelines closed/s (first delivery sent → last pipeline closed)`,
    );
    // Pipelines whose work ran beside the acknowledgements: the forwarder signalled them during the burst.
    const closedDuringBurst = closedTimes.filter((closed) => closed <= real.endedAt).length;
    log(`  pipelines closed before the burst's last answer: ${closedDuringBurst}`);
    const baselineAfter = await nullSinkBurst('bridge-null-after');
    const bursts = [baselineBefore, baselineAfter];
    const baseline = {
      deliveriesPerSecond: round(bursts.reduce((sum, b) => sum + b.deliveriesPerSecond, 0) / bursts.length),
      bursts: bursts.map((b) => b.deliveriesPerSecond),
      answerMs: summarize(bursts.flatMap((b) => b.answerMs)),
      non202: bursts.reduce((n, b) => n + b.non202, 0),
      cpuMsPerThousand: Object.fromEntries(
        Object.keys(baselineBefore.cpuMsPerThousand).map((name) => [
          name,
          round(bursts.reduce((sum, b) => sum + (b.cpuMsPerThousand[name] ?? 0), 0) / bursts.length),
        ]),
      ),
    };
    const bridge: BridgeResult = {
      size,
      baseline,
      bridge: {
        deliveriesPerSecond: real.deliveriesPerSecond,
        answerMs: summarize(real.answerMs),
        non202: real.non202,
        deliveryToPipelineClosedMs: summarize(latencies),
        pipelinesClosedPerSecond: sustainedRate(Object.values(real.sentAt), closedTimes),
        pipelinesClosedDuringBurst: closedDuringBurst,
        cpuMsPerThousand,
      },
      ratio: round(real.deliveriesPerSecond / baseline.deliveriesPerSecond, 4),
    };
    return { footprint, bridge };
  } finally {
    await connection.close();
    await stack.stop();
  }
}

/** Items per second from the first of `starts` to the last of `ends` (0 when either is empty). */
function sustainedRate(starts: number[], ends: number[]): number {
  if (starts.length === 0 || ends.length === 0) return 0;
  const seconds = (Math.max(...ends) - Math.min(...starts)) / 1000;
  return seconds > 0 ? round(ends.length / seconds, 1) : 0;
}
