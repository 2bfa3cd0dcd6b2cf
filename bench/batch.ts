/**
 * The batch bench (`npm run bench -- --only batch [--items 10000] [--manifest-rows 100000]`; not part of
 * the default run). One stack (every part its own process, stub renders with no hold), the worker run as
 * production runs it (docker-compose.yml: workflow cache 250, `--max-old-space-size=256`,
 * `MALLOC_ARENA_MAX=2`), and every batch started by the real CLI (`dist/cli/main.js batch …`, its own
 * process) as a user starts it:
 *  1. the throughput peak of independent three-step pipelines on the same stack (bench/throughput.ts's
 *     climb, shorter windows allowed): the baseline of items/s;
 *  2. a batch of `items` three-step items (the throughput bench's pipelines: long-form → re-voice →
 *     upscale, same models and inputs, the image and voice as files the CLI moves into the media
 *     store, archive mode `never` as theirs) from one CSV naming one spec, with the service failing
 *     a share of jobs so that about 5 % of the items fail: wall time, items/s ÷ the peak, worker RSS
 *     (sampled each second), the largest history of any batch run, service calls per item (the
 *     service's own counters);
 *  3. `reelflow batch --rerun-failed`: the items resubmitted, counted from the service's job records;
 *  4. a manifest of `manifestRows` rows accepted and started (`--detach`), jobs held in progress at the
 *     service, then `reelflow cancel batch/…`: the service's job records after it, and the pipelines
 *     still running in Temporal.
 * Every phase has a deadline; the stack is stopped whatever happens.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { WORKFLOW_TYPES } from '../src/contract/workflow-names';
import type { BatchItemResult, BatchProgress } from '../src/workflows/batch-types';
import { isTerminalState } from '../src/contract';
import { openMediaStore } from '../src/media/store';
import { maxJobsInFlight } from '../test/helpers/jobs-in-flight';
import { jsonOf, runCli } from './lib/cli';
import { THREE_STEPS, writeCsv, writeMediaFiles, writeSpecFile } from './lib/cli-inputs';
import { sampleProcess } from './lib/processes';
import { BENCH_ADMIN_KEY, BENCH_API_KEY, serviceCall, startBenchStack, type BenchStack } from './lib/stack';
import { round } from './lib/stats';
import { climb, level, peakOf, type Level } from './throughput';

export interface BatchSize {
  /** Items of the measured batch. */
  items: number;
  /** Rows of the manifest that is accepted, started and cancelled. */
  manifestRows: number;
  /** `--concurrency` of the batches (absent: twice the concurrency of the throughput peak). */
  concurrency?: number;
  /** Window and highest level of the throughput climb that gives the baseline. */
  throughputWindowS: number;
  throughputMaxLevel: number;
}

export const BATCH_FULL: BatchSize = {
  items: 10_000,
  manifestRows: 100_000,
  throughputWindowS: 12,
  throughputMaxLevel: 64,
};
export const BATCH_QUICK: BatchSize = { items: 40, manifestRows: 500, throughputWindowS: 3, throughputMaxLevel: 2 };

/** The worker as docker-compose.yml runs it in production (docs/production.md, worker memory). */
export const PRODUCTION_WORKER = { maxCachedWorkflows: 250, heapMiB: 256, mallocArenaMax: 2 };

/** Share of items the service's faults should fail: a job fails with rate p, an item of 3 jobs with 1 − (1 − p)³. */
const ITEM_FAILURE_SHARE = 0.05;
const JOB_FAILURE_RATE = round(1 - (1 - ITEM_FAILURE_SHARE) ** (1 / 3), 4);

/** Service calls (the service's counters) per item of a batch. */
export interface CallsPerItem {
  submits: number;
  statusCalls: number;
  resultCalls: number;
  quoteCalls: number;
  cancelCalls: number;
  total: number;
}

export interface BatchResult {
  size: BatchSize;
  worker: typeof PRODUCTION_WORKER;
  /** Independent pipelines on the same stack, the baseline of items/s. */
  throughput: { levels: Level[]; peak: Level };
  batch: {
    items: number;
    concurrency: number;
    /** The CLI's wall time: loading the CSV, storing the manifest, starting and following the batch. */
    wallSeconds: number;
    /** The batch workflow's own clock, first start to last item. */
    workflowSeconds: number;
    /** Items that ran to an end (completed or failed) ÷ wall time. */
    itemsPerSecond: number;
    /** itemsPerSecond ÷ the throughput peak (pipelines/s). */
    ratioToThroughputPeak: number;
    completed: number;
    failed: number;
    jobFailureRate: number;
    /** Runs of the batch workflow (continue-as-new and partitions) and the largest history of any of them. */
    runs: number;
    largestRunHistoryEvents: number;
    /** The largest history of any batch run, in bytes (Temporal's limit: 50 MB). */
    largestRunHistoryBytes: number;
    callsPerItem: CallsPerItem;
    jobs: number;
    duplicateKeys: number;
    maxJobsInFlight: number;
    workerRssMiB: { peak: number; mean: number; samples: number };
  };
  rerun: {
    failedItems: number;
    /** Distinct items the rerun's new jobs at the service belong to. */
    resubmittedItems: number;
    /** True when the resubmitted items are exactly the failed ones. */
    exact: boolean;
    newJobs: number;
    completed: number;
    wallSeconds: number;
    workerRssPeakMiB: number;
  };
  manifest: {
    rows: number;
    bytes: number;
    /** `reelflow batch --detach`: load, check, store the manifest, start the batch. */
    acceptSeconds: number;
    /** How the batch workflow closed (CANCELLED). */
    temporalStatus: string;
    /** Jobs of the batch in flight at the service when the cancel was asked. */
    jobsInFlightAtCancel: number;
    /** `reelflow cancel batch/…` until it returned (the batch closed). */
    cancelSeconds: number;
    /** Jobs of the batch the service's records show not terminal after the cancel. */
    leftInFlightAtService: number;
    jobsStarted: number;
    /** Pipelines of the batch Temporal still lists as running after the cancel. */
    runningPipelines: number;
    counts: { completed: number; failed: number; cancelled: number; skipped: number };
    workerRssPeakMiB: number;
  };
}

/** Samples the RSS of `pid` every second until stopped. */
function rssSampler(pid: number): { stop(): { peak: number; mean: number; samples: number } } {
  const samples: number[] = [];
  const sample = () => {
    try {
      samples.push(sampleProcess(pid).rssMiB);
    } catch {
      /* the process is gone: the phase will fail on its own */
    }
  };
  sample();
  const timer = setInterval(sample, 1_000);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return {
        peak: Math.max(...samples),
        mean: Math.round(samples.reduce((a, b) => a + b, 0) / samples.length),
        samples: samples.length,
      };
    },
  };
}

/**
 * The items' spec: the throughput bench's three-step pipeline (same models and inputs) as a user's CSV gives
 * it, with `archive: never` as the baseline's pipelines run, so that the ratio measures the batch's machinery.
 */
function writeSpec(dir: string): void {
  writeMediaFiles(dir);
  writeSpecFile(dir, 'three-step', THREE_STEPS);
}

/** The item name in a job's Idempotency-Key (`reelflow:<item>/job/<step>:…`). */
const itemOf = (key: string | null) => /^reelflow:([^/]+)\/job\//.exec(key ?? '')?.[1] ?? null;

async function setFaults(stack: BenchStack, faults: Record<string, unknown>): Promise<void> {
  await serviceCall(stack.serviceUrl, 'PUT', '/v1/admin/faults', faults, BENCH_ADMIN_KEY);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Events of the largest history among every run of every batch workflow so far (partitions included). */
async function batchRunHistories(client: Client): Promise<{ runs: number; largest: number; largestBytes: number }> {
  const lengths: number[] = [];
  const sizes: number[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowType = '${WORKFLOW_TYPES.batch}'` })) {
    // Described, not fetched: a run's history can be larger than one gRPC message.
    const described = await client.workflow.getHandle(execution.workflowId, execution.runId).describe();
    lengths.push(described.historyLength);
    sizes.push(described.historySize ?? 0);
  }
  return { runs: lengths.length, largest: Math.max(0, ...lengths), largestBytes: Math.max(0, ...sizes) };
}

/** Runs the batch bench on a stack of its own (its own dev server). */
export async function runBatch(size: BatchSize, log: (line: string) => void): Promise<BatchResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-batch-'));
  const mediaStore = `file://${path.join(dir, 'media')}`;
  const { store } = openMediaStore({ kind: 'file', dir: path.join(dir, 'media'), urlLifetimeSeconds: 3600 });
  const stack = await startBenchStack({
    name: 'batch',
    render: 'stub',
    stubHoldMs: 0,
    bridge: true,
    worker: true,
    workerEnv: {
      REELFLOW_MEDIA_STORE: mediaStore,
      REELFLOW_MAX_CACHED_WORKFLOWS: String(PRODUCTION_WORKER.maxCachedWorkflows),
      NODE_OPTIONS: `--max-old-space-size=${PRODUCTION_WORKER.heapMiB}`,
      MALLOC_ARENA_MAX: String(PRODUCTION_WORKER.mallocArenaMax),
    },
  });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection });
  const workerPid = stack.processes.worker!.pid;
  const cliEnv = {
    TEMPORAL_ADDRESS: stack.temporalAddress,
    REELFLOW_TASK_QUEUE: stack.taskQueue,
    REELFLOW_SERVICE_URL: stack.serviceUrl,
    REELFLOW_API_KEY: BENCH_API_KEY,
    REELFLOW_MEDIA_STORE: mediaStore,
  };
  try {
    writeSpec(dir);
    // 1. The baseline: independent pipelines on this stack, climbing as the throughput bench does.
    log('  throughput peak of independent three-step pipelines (the baseline)…');
    await level(stack, 'pipeline', 2, 2);
    const levels = await climb(stack, 'pipeline', size.throughputWindowS, size.throughputMaxLevel, log);
    const peak = peakOf(levels);
    const concurrency = size.concurrency ?? Math.min(500, 2 * peak.concurrency);

    // 2. The batch, a share of its jobs failed by the service.
    const itemsCsv = writeCsv(dir, 'b', 'three-step', size.items);
    await setFaults(stack, { failureRate: JOB_FAILURE_RATE });
    const before = await stack.clocks();
    log(
      `  batch of ${size.items} items, --concurrency ${concurrency}, ${round(JOB_FAILURE_RATE * 100, 2)} % of jobs failed by the service…`,
    );
    let rss = rssSampler(workerPid);
    // Bounded: at least 1 item/s plus 10 minutes, or the bench fails (and stops the stack).
    const first = await runCli(
      ['batch', itemsCsv, '--name', 'bench', '--concurrency', String(concurrency), '--json'],
      cliEnv,
      dir,
      (600 + size.items) * 1000,
    );
    const batchRss = rss.stop();
    await setFaults(stack, { failureRate: 0 });
    const progress = jsonOf<BatchProgress & { results: BatchItemResult[] }>(first, 'reelflow batch');
    if (progress.status !== 'completed' || progress.completed + progress.failed !== size.items)
      throw new Error(`the batch ended ${progress.status} with ${progress.completed} + ${progress.failed} items`);
    const after = await stack.clocks();
    const batchJobs = after.jobs.filter((j) => itemOf(j.idempotencyKey)?.startsWith('b-'));
    const failed = progress.results.filter((r) => r.status === 'failed').map((r) => r.name);
    const histories = await batchRunHistories(client);
    const per = (name: string) => ((after.counters[name] ?? 0) - (before.counters[name] ?? 0)) / size.items;
    const callsPerItem: CallsPerItem = {
      submits: round(per('submits'), 3),
      statusCalls: round(per('statusCalls'), 3),
      resultCalls: round(per('resultCalls'), 3),
      quoteCalls: round(per('quoteCalls'), 3),
      cancelCalls: round(per('cancelCalls'), 3),
      total: round(
        per('submits') + per('statusCalls') + per('resultCalls') + per('quoteCalls') + per('cancelCalls'),
        3,
      ),
    };
    const itemsPerSecond = round(size.items / first.seconds, 2);
    const batch: BatchResult['batch'] = {
      items: size.items,
      concurrency,
      wallSeconds: round(first.seconds, 1),
      workflowSeconds: round(((progress.updatedAt ?? 0) - (progress.startedAt ?? 0)) / 1000, 1),
      itemsPerSecond,
      ratioToThroughputPeak: round(itemsPerSecond / peak.perSecond, 2),
      completed: progress.completed,
      failed: progress.failed,
      jobFailureRate: JOB_FAILURE_RATE,
      runs: histories.runs,
      largestRunHistoryEvents: histories.largest,
      largestRunHistoryBytes: histories.largestBytes,
      callsPerItem,
      jobs: batchJobs.length,
      duplicateKeys: batchJobs.length - new Set(batchJobs.map((j) => j.idempotencyKey)).size,
      maxJobsInFlight: maxJobsInFlight(batchJobs),
      workerRssMiB: batchRss,
    };
    log(
      `  batch: ${batch.itemsPerSecond} items/s (${batch.ratioToThroughputPeak} of ${peak.perSecond}/s), ${failed.length} failed, ` +
        `worker RSS peak ${batchRss.peak} MiB, largest run history ${histories.largest} events (${round(histories.largestBytes / 2 ** 20, 1)} MiB), ${callsPerItem.total} service calls per item`,
    );

    // 3. Rerun exactly the failed items.
    const known = new Set(after.jobs.map((j) => j.id));
    rss = rssSampler(workerPid);
    const rerun = await runCli(
      ['batch', '--rerun-failed', 'batch/bench', '--json'],
      cliEnv,
      dir,
      (600 + failed.length * 2) * 1000,
    );
    const rerunRss = rss.stop();
    const rerunProgress =
      failed.length > 0 ? jsonOf<BatchProgress>(rerun, 'reelflow batch --rerun-failed') : { completed: 0 };
    const newJobs = (await stack.clocks()).jobs.filter((j) => !known.has(j.id));
    const resubmitted = [...new Set(newJobs.map((j) => itemOf(j.idempotencyKey) ?? j.id))].sort();
    const rerunResult: BatchResult['rerun'] = {
      failedItems: failed.length,
      resubmittedItems: resubmitted.length,
      exact: JSON.stringify(resubmitted) === JSON.stringify([...failed].sort()),
      newJobs: newJobs.length,
      completed: rerunProgress.completed,
      wallSeconds: round(rerun.seconds, 1),
      workerRssPeakMiB: rerunRss.peak,
    };
    log(
      `  rerun: ${failed.length} failed, ${resubmitted.length} resubmitted (${rerunResult.exact ? 'exactly those' : 'NOT exactly those'}), ${rerunResult.completed} completed`,
    );

    // 4. A large manifest accepted, started, then cancelled while its jobs are in progress at the service.
    const manifestCsv = writeCsv(dir, 'm', 'three-step', size.manifestRows);
    await setFaults(stack, { modelDurationMs: 3_600_000 });
    rss = rssSampler(workerPid);
    log(`  manifest of ${size.manifestRows} rows: accept, start, cancel…`);
    const accepted = await runCli(
      ['batch', manifestCsv, '--name', 'manifest', '--concurrency', String(concurrency), '--detach', '--json'],
      cliEnv,
      dir,
      (600 + size.manifestRows / 50) * 1000,
    );
    if (accepted.code !== 0) throw new Error(`reelflow batch --detach exited ${accepted.code}:\n${accepted.stderr}`);
    const manifestJobs = async () =>
      (await stack.clocks()).jobs.filter((j) => itemOf(j.idempotencyKey)?.startsWith('m-'));
    const wanted = Math.min(concurrency, size.manifestRows);
    const deadline = Date.now() + 300_000;
    let inFlight = 0;
    while ((inFlight = (await manifestJobs()).filter((j) => !isTerminalState(j.status)).length) < wanted) {
      if (Date.now() > deadline) throw new Error(`only ${inFlight} of ${wanted} jobs in flight after 300 s`);
      await pause(1_000);
    }
    const cancel = await runCli(['cancel', 'batch/manifest', '--json'], cliEnv, dir, 600_000);
    if (cancel.code !== 0) throw new Error(`reelflow cancel exited ${cancel.code}:\n${cancel.stderr}`);
    const manifestRss = rss.stop();
    await setFaults(stack, { modelDurationMs: 0 });
    const jobsAfter = await manifestJobs();
    const cancelled = jsonOf<{ temporalStatus: string; progress: BatchProgress }>(cancel, 'reelflow cancel');
    const closed = cancelled.progress;
    const running = await client.workflow.count(`ReelflowBatch = 'manifest' AND ExecutionStatus = 'Running'`);
    const manifest: BatchResult['manifest'] = {
      rows: size.manifestRows,
      temporalStatus: cancelled.temporalStatus,
      bytes: (await store.stat(closed.manifest?.sha256 ?? ''))?.bytes ?? 0,
      acceptSeconds: round(accepted.seconds, 1),
      jobsInFlightAtCancel: inFlight,
      cancelSeconds: round(cancel.seconds, 1),
      leftInFlightAtService: jobsAfter.filter((j) => !isTerminalState(j.status)).length,
      jobsStarted: jobsAfter.length,
      runningPipelines: running.count,
      counts: {
        completed: closed.completed,
        failed: closed.failed,
        cancelled: closed.cancelled,
        skipped: closed.skipped,
      },
      workerRssPeakMiB: manifestRss.peak,
    };
    log(
      `  manifest: accepted and started in ${manifest.acceptSeconds} s, cancelled in ${manifest.cancelSeconds} s with ${inFlight} jobs in flight; ` +
        `${manifest.leftInFlightAtService} left in flight at the service, ${manifest.runningPipelines} pipelines running`,
    );
    return { size, worker: PRODUCTION_WORKER, throughput: { levels, peak }, batch, rerun: rerunResult, manifest };
  } finally {
    await connection.close();
    await stack.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
