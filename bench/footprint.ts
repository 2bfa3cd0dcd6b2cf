/**
 * Worker footprint (a script, not a test): `npx tsx bench/footprint.ts`.
 *
 * Starts a Temporal dev server, a local service whose jobs stay running for an hour (modelDurationMs),
 * and the real worker entry point as a child process (`node -r tsx/cjs src/workers/worker.ts`). It
 * starts BENCH_FOOTPRINT_N one-step pipelines (default 1000), waits until every one has submitted its
 * job (each job workflow is then waiting on its webhook; the first fallback poll is due only after the
 * model's expected run time, 180 s), then samples the worker's RSS and CPU time from /proc over
 * BENCH_FOOTPRINT_WINDOW_S seconds (default 30). Results go to .bench/footprint.json.
 */
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startDevServer } from '../test/helpers/temporal';
import { PIXEL_PNG, TEST_API_KEY } from '../test/helpers/local-service';
import { startLocalService } from '../src/service';
import { pipeline } from '../src/pipeline';
import { SEARCH_ATTRIBUTE_KEYS, pipelineWorkflowId } from '../src/workflows/definitions';
import { runBench, writeBenchJson } from './bench-output';

const N = Number(process.env.BENCH_FOOTPRINT_N ?? 1000);
const WINDOW_S = Number(process.env.BENCH_FOOTPRINT_WINDOW_S ?? 30);
const LONG_FORM = 'service-video-cinema-long-form-from-references' as const;
const TICKS = 100; // USER_HZ on Linux

function sample(pid: number): { rssMiB: number; cpuSeconds: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpu = (Number(fields[11]) + Number(fields[12])) / TICKS; // utime + stime
  return { rssMiB: Math.round(rssKiB / 1024), cpuSeconds: cpu };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const started = Date.now();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-footprint-'));
  const taskQueue = `bench-footprint-${randomUUID()}`;
  const env = await startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS });
  const service = await startLocalService({ dataDir, apiKeys: [TEST_API_KEY], allowPrivateWebhooks: true, credits: 100_000_000, concurrencyPerModel: 1, faults: { modelDurationMs: 3_600_000 } });
  const child = spawn(process.execPath, ['-r', 'tsx/cjs', path.join(__dirname, '..', 'src', 'workers', 'worker.ts')], {
    cwd: path.join(__dirname, '..'),
    env: { ...process.env, TEMPORAL_ADDRESS: env.address, REELFLOW_TASK_QUEUE: taskQueue, REELFLOW_SERVICE_URL: service.url, REELFLOW_API_KEY: TEST_API_KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  try {
    while (!/reelflow worker: task queue/.test(output)) {
      if (child.exitCode !== null) throw new Error(`worker exited:\n${output}`);
      await sleep(200);
    }
    const idle = sample(child.pid!);
    for (let i = 0; i < N; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, N - i) }, (_, j) => {
          const spec = pipeline(`fp-${i + j}`).step('generate', LONG_FORM, { image_urls: [PIXEL_PNG], duration: '4', resolution: '480p' }).build({ allowedOrigins: [service.url] });
          return env.client.workflow.start('pipelineWorkflow', { taskQueue, workflowId: pipelineWorkflowId(spec.name), args: [{ spec, uriRules: { allowedOrigins: [service.url] }, defaultPacing: { earlyCheckSeconds: 0 } }] }); // waiting cost alone: no early status check
        }),
      );
    }
    while (service.jobs().length < N) {
      if (Date.now() - started > 600_000) throw new Error(`only ${service.jobs().length}/${N} jobs submitted after 10 min`);
      await sleep(500);
    }
    const rampSeconds = Math.round((Date.now() - started) / 1000);
    await sleep(2_000);
    const before = sample(child.pid!);
    const rss: number[] = [];
    for (let t = 0; t < WINDOW_S; t += 1) {
      await sleep(1000);
      rss.push(sample(child.pid!).rssMiB);
    }
    const after = sample(child.pid!);
    const result = {
      machine: { nproc: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version },
      pipelinesWaiting: N,
      rampSeconds,
      idleRssMiB: idle.rssMiB,
      waitingRssMiB: { min: Math.min(...rss), max: Math.max(...rss) },
      cpuPercentWhileWaiting: Math.round(((after.cpuSeconds - before.cpuSeconds) / WINDOW_S) * 1000) / 10,
      windowSeconds: WINDOW_S,
      /** Status polls the service saw in the whole run (0 expected: nobody polls before 180 s). */
      statusCallsInRun: service.counters().statusCalls,
    };
    console.table({ 'worker RSS idle (MiB)': idle.rssMiB, 'worker RSS waiting (MiB, max)': result.waitingRssMiB.max, 'worker CPU while waiting (%)': result.cpuPercentWhileWaiting, 'pipelines waiting': N });
    writeBenchJson('footprint', result);
  } finally {
    child.kill('SIGKILL');
    await service.close();
    await env.teardown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runBench(main);
