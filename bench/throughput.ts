/**
 * Throughput (a script, not a test): `npx tsx bench/throughput.ts`.
 *
 * One Temporal dev server, one run, two kinds of work measured at the same concurrency levels:
 *  - reelflow: three-step pipelines (threeStepPipeline: long-form 4 s 480p from a 1×1 PNG → re-voice
 *    with a 1 s silent WAV → upscale) against the in-process local service with instant models
 *    (faults.modelDurationMs = 0; the service still renders each clip with ffmpeg). Completions go the
 *    real webhook path: the service signs and POSTs to a registered endpoint served by the real
 *    bridge (startBridgeServer), which signals the rendezvous, which forwards to the job workflow.
 *  - raw: bench/throughput-raw.workflows.ts (three trivial activities in sequence) on its own worker
 *    and task queue, same server: the ceiling Temporal itself gives this machine.
 * Each level is a closed loop: C callers each start a workflow, await its result, start the next.
 * Rate = completions inside the window / window length. Levels double from 1 until reelflow's rate
 * rises by no more than 10 % (or BENCH_TP_MAX_LEVEL). Also reported per level: where a pipeline's time
 * went, from the service's own clock (job submitted → completed, i.e. queue + ffmpeg render; and
 * hand-offs between steps). Env: BENCH_TP_WINDOW_S (15), BENCH_TP_RAW_WINDOW_S (8),
 * BENCH_TP_MAX_LEVEL (16). Results go to .bench/throughput.json.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DefaultLogger, Runtime, Worker, bundleWorkflowCode } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { startDevServer } from '../test/helpers/temporal';
import { PIXEL_PNG, TEST_API_KEY } from '../test/helpers/local-service';
import { bundleReelflowWorkflows, quietLogger, silentWavDataUri } from '../test/integration/workflow-harness';
import { startLocalService, type JobView } from '../src/service';
import { createServiceClient } from '../src/client/service-client';
import { createReelflowWorker } from '../src/workers/worker';
import { startRegisteredBridge } from '../test/helpers/registered-bridge';
import { runBench, writeBenchJson } from './bench-output';
import { threeStepPipeline } from '../src/pipeline';
import { SEARCH_ATTRIBUTE_KEYS, pipelineWorkflowId } from '../src/workflows/definitions';

const WINDOW_S = Number(process.env.BENCH_TP_WINDOW_S ?? 15);
const RAW_WINDOW_S = Number(process.env.BENCH_TP_RAW_WINDOW_S ?? 8);
const MAX_LEVEL = Number(process.env.BENCH_TP_MAX_LEVEL ?? 16);
const STEPS = ['generate', 'revoice', 'upscale'] as const;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}


interface LevelRun {
  rate: number;
  completed: number;
  failed: number;
  latencyMs: { p50: number; p90: number };
  /** Names (or ids) of the runs that completed inside the window. */
  names: string[];
}

/**
 * Closed loop at `concurrency`: each caller runs `once(name)` back to back until the window closes.
 * Runs still in flight at the close are awaited but not counted.
 */
async function closedLoop(concurrency: number, windowS: number, prefix: string, once: (name: string) => Promise<boolean>): Promise<LevelRun> {
  const t0 = Date.now();
  const deadline = t0 + windowS * 1000;
  const latencies: number[] = [];
  const names: string[] = [];
  let failed = 0;
  let seq = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < deadline) {
        const name = `${prefix}-${(seq += 1)}`;
        const start = Date.now();
        const ok = await once(name);
        const end = Date.now();
        if (end > deadline) continue;
        if (ok) {
          latencies.push(end - start);
          names.push(name);
        } else failed += 1;
      }
    }),
  );
  const sorted = latencies.sort((a, b) => a - b);
  return { rate: names.length / windowS, completed: names.length, failed, latencyMs: { p50: percentile(sorted, 50), p90: percentile(sorted, 90) }, names };
}

/** Where a pipeline's time went, on the service's clock, averaged over the pipelines named. */
function breakdown(jobs: JobView[], names: string[]) {
  let serviceMs = 0;
  let handoffMs = 0;
  let n = 0;
  for (const name of names) {
    const own = STEPS.map((step) => jobs.find((j) => j.idempotencyKey?.startsWith(`reelflow:${name}/job/${step}:`) && j.status === 'COMPLETED'));
    if (own.some((j) => !j?.completedAt)) continue;
    n += 1;
    own.forEach((job, i) => {
      serviceMs += job!.completedAt! - job!.submittedAt;
      if (i > 0) handoffMs += job!.submittedAt - own[i - 1]!.completedAt!;
    });
  }
  const round = (v: number) => (n ? Math.round(v / n) : Number.NaN);
  return { pipelines: n, serviceMsPerPipeline: round(serviceMs), handoffMsPerPipeline: round(handoffMs) };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const started = Date.now();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-throughput-'));
  const taskQueue = `bench-tp-${randomUUID()}`;
  const rawQueue = `bench-tp-raw-${randomUUID()}`;
  const [bundle, rawBundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    bundleWorkflowCode({ workflowsPath: require.resolve('./throughput-raw.workflows'), logger: quietLogger() }),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  // Per-model concurrency at the top level, so the service's own queue is not what is measured.
  const service = await startLocalService({ dataDir, apiKeys: [TEST_API_KEY], allowPrivateWebhooks: true, credits: 100_000_000, concurrencyPerModel: Math.min(64, MAX_LEVEL), faults: { modelDurationMs: 0 } });
  const { bridge } = await startRegisteredBridge({ serviceUrl: service.url, temporalAddress: env.address, taskQueue, logLevel: 'warn' });
  const serviceClient = createServiceClient({ baseUrl: service.url, apiKey: TEST_API_KEY });
  const worker = await createReelflowWorker({ connection: env.nativeConnection, client: env.client, taskQueue, service: serviceClient, workflowBundle: bundle });
  const rawWorker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue: rawQueue,
    workflowBundle: rawBundle,
    activities: { rawStep: (step: number, input: string) => Promise.resolve(`${input}/${step}`) },
  });
  const running = Promise.all([worker.run(), rawWorker.run()]);
  const audio = silentWavDataUri(1, 8000);
  const rules = { allowedOrigins: [service.url] };
  const client: Client = env.client;

  const runPipeline = async (name: string): Promise<boolean> => {
    const spec = threeStepPipeline({ imageUrls: [PIXEL_PNG], audioUrl: audio, duration: '4' }, name, rules);
    const summary = (await client.workflow.execute('pipelineWorkflow', { taskQueue, workflowId: pipelineWorkflowId(spec.name), args: [{ spec, uriRules: rules }] })) as { status: string };
    return summary.status === 'completed';
  };
  const runRaw = async (name: string): Promise<boolean> => {
    const out = (await client.workflow.execute('rawThreeStepWorkflow', { taskQueue: rawQueue, workflowId: name, args: ['x'] })) as string;
    return out === 'x/1/2/3';
  };

  const rows: Array<Record<string, number>> = [];
  const levels: Array<Record<string, unknown>> = [];
  try {
    // Warm-up (not counted): bundles loaded, ffmpeg paged in, connections open.
    if (!(await runPipeline('tp-warm-0')) || !(await runRaw(`tp-raw-warm-${randomUUID()}`))) throw new Error('warm-up failed');
    let previous = 0;
    for (let c = 1; c <= MAX_LEVEL; c *= 2) {
      const reel = await closedLoop(c, WINDOW_S, `tp-c${c}`, runPipeline);
      const raw = await closedLoop(c, RAW_WINDOW_S, `tp-raw-c${c}-${randomUUID().slice(0, 8)}`, runRaw);
      const where = breakdown(service.jobs(), reel.names);
      const row = {
        concurrency: c,
        'reelflow pipelines/s': Math.round(reel.rate * 100) / 100,
        'raw workflows/s': Math.round(raw.rate * 10) / 10,
        'ratio reelflow/raw': Math.round((reel.rate / raw.rate) * 1000) / 1000,
        'pipeline p50 ms': reel.latencyMs.p50,
        'service ms/pipeline': where.serviceMsPerPipeline,
        'hand-off ms/pipeline': where.handoffMsPerPipeline,
      };
      rows.push(row);
      levels.push({ concurrency: c, reelflow: { ...reel, names: undefined, breakdown: where }, raw: { ...raw, names: undefined } });
      process.stdout.write(`c=${c}: ${row['reelflow pipelines/s']} pipelines/s, ${row['raw workflows/s']} raw/s (${Math.round((Date.now() - started) / 1000)} s)\n`);
      if (reel.failed || raw.failed) process.stdout.write(`  failed: reelflow ${reel.failed}, raw ${raw.failed}\n`);
      if (c > 1 && reel.rate <= previous * 1.1) break;
      previous = Math.max(previous, reel.rate);
    }
    const result = {
      machine: { nproc: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, cpu: os.cpus()[0]?.model },
      settings: { WINDOW_S, RAW_WINDOW_S, MAX_LEVEL, chain: 'long-form 4 s 480p (1x1 PNG) → re-voice (1 s silent WAV) → upscale', modelDurationMs: 0, completionPath: 'real webhook path (service → bridge → rendezvous)' },
      table: rows,
      levels,
      statusCallsInRun: service.counters().statusCalls,
      seconds: Math.round((Date.now() - started) / 1000),
    };
    console.log('\nThroughput (closed loop; reelflow window %d s, raw window %d s)', WINDOW_S, RAW_WINDOW_S);
    console.table(rows);
    console.log(`status calls in run: ${result.statusCallsInRun}; total ${result.seconds} s`);
    writeBenchJson('throughput', result);
  } finally {
    worker.shutdown();
    rawWorker.shutdown();
    await running;
    await bridge.close();
    await serviceClient.close();
    await service.close();
    await env.teardown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runBench(main);
