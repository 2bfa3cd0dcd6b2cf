/**
 * Hand-off latency and API calls per job (a script, not a test): `npx tsx bench/handoff.ts`.
 *
 * One run, one local service (in-process), one Temporal dev server, three ways of chaining jobs:
 *  - reelflow, webhook path: service → real bridge (startBridgeServer) → rendezvous → job workflow;
 *  - reelflow, polling fallback: the same pipelines with no webhook endpoint registered, pacing
 *    overridden to the jobs' real run time (firstPollSeconds = BENCH_POLL_FIRST_S, default 1);
 *  - a naive client (bench/naive-client.ts): submit, poll status every 500 ms, fetch, submit next.
 * The chain is a long-form generation followed by BENCH_STEPS re-voicings of its output, so each
 * pipeline yields BENCH_STEPS hand-offs. A hand-off is measured on the service's own clock: from the
 * job's completedAt to the next step's submittedAt.
 *
 * Then status calls per job for 5 s jobs (measured, BENCH_CALL_JOBS jobs per mode) and for 60 s and
 * 600 s jobs (computed: reelflow's pacing formula with its default pacing, the naive client as
 * ⌈duration / 0.5 s⌉ — stated as computed in the output).
 *
 * Env: BENCH_PIPELINES (20), BENCH_STEPS (10), BENCH_MODEL_MS (300), BENCH_POLL_FIRST_S (1),
 * BENCH_CALL_JOBS (4). Results go to .bench/handoff.json.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { startDevServer } from '../test/helpers/temporal';
import { PIXEL_PNG, TEST_API_KEY, api } from '../test/helpers/local-service';
import { bundleReelflowWorkflows, silentWavDataUri } from '../test/integration/workflow-harness';
import { startLocalService, type JobView, type LocalService } from '../src/service';
import { createServiceClient } from '../src/client/service-client';
import { createReelflowWorker } from '../src/workers/worker';
import { MODELS } from '../src/contract';
import { from, pipeline, pollOffsetSeconds, resolvePacing, type PipelineSpec } from '../src/pipeline';
import { SEARCH_ATTRIBUTE_KEYS, pipelineWorkflowId } from '../src/workflows/definitions';
import { NAIVE_POLL_MS, runNaiveChain, type NaiveStep } from './naive-client';
import { startRegisteredBridge } from '../test/helpers/registered-bridge';
import { runBench, writeBenchJson } from './bench-output';

const PIPELINES = Number(process.env.BENCH_PIPELINES ?? 20);
const STEPS = Number(process.env.BENCH_STEPS ?? 10);
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 300);
const POLL_FIRST_S = Number(process.env.BENCH_POLL_FIRST_S ?? 1);
const CALL_JOBS = Number(process.env.BENCH_CALL_JOBS ?? 4);
const LONG_FORM = 'service-video-cinema-long-form-from-references' as const;
const REVOICE = 'service-horizon-studio' as const;
const UPSCALE = 'service-upscale-video-fast' as const;

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}


function chainSpec(name: string, audio: string, origin: string): PipelineSpec {
  let builder = pipeline(name).step('generate', LONG_FORM, { image_urls: [PIXEL_PNG], duration: '4', resolution: '480p' });
  let previous = 'generate';
  for (let i = 1; i <= STEPS; i += 1) {
    builder = builder.step(`r${i}`, REVOICE, { video_url: from(previous), audio_url: audio });
    previous = `r${i}`;
  }
  return builder.build({ allowedOrigins: [origin] });
}

/** Hand-offs of reelflow pipelines, found by the step part of each job's Idempotency-Key. */
function reelflowHandoffs(jobs: JobView[], names: string[]): number[] {
  const out: number[] = [];
  for (const name of names) {
    const steps = ['generate', ...Array.from({ length: STEPS }, (_, i) => `r${i + 1}`)];
    const jobOf = (step: string) => jobs.filter((j) => j.idempotencyKey?.startsWith(`reelflow:${name}/job/${step}:`) && j.status === 'COMPLETED')[0];
    for (let i = 1; i < steps.length; i += 1) {
      const before = jobOf(steps[i - 1]!);
      const after = jobs.filter((j) => j.idempotencyKey?.startsWith(`reelflow:${name}/job/${steps[i]!}:`)).sort((a, b) => a.submittedAt - b.submittedAt)[0];
      if (before?.completedAt && after) out.push(after.submittedAt - before.completedAt);
    }
  }
  return out;
}

function naiveHandoffs(jobs: JobView[], chains: string[][]): number[] {
  const byId = new Map(jobs.map((j) => [j.id, j]));
  const out: number[] = [];
  for (const ids of chains) {
    for (let i = 1; i < ids.length; i += 1) {
      const before = byId.get(ids[i - 1]!);
      const after = byId.get(ids[i]!);
      if (before?.completedAt && after) out.push(after.submittedAt - before.completedAt);
    }
  }
  return out;
}

function stats(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99) };
}

async function runPipelines(client: Client, taskQueue: string, specs: PipelineSpec[], origin: string, pacing?: { firstPollSeconds: number; factor: number; capSeconds: number }): Promise<void> {
  const handles = await Promise.all(
    specs.map((spec) =>
      client.workflow.start('pipelineWorkflow', {
        taskQueue,
        workflowId: pipelineWorkflowId(spec.name),
        args: [{ spec, uriRules: { allowedOrigins: [origin] }, ...(pacing ? { defaultPacing: pacing } : {}) }],
      }),
    ),
  );
  const summaries = await Promise.all(handles.map((h) => h.result() as Promise<{ status: string }>));
  const bad = summaries.filter((s) => s.status !== 'completed');
  if (bad.length) throw new Error(`${bad.length} pipelines did not complete`);
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const started = Date.now();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-bench-'));
  const taskQueue = `bench-handoff-${randomUUID()}`;
  const [bundle, env] = await Promise.all([bundleReelflowWorkflows(), startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS })]);
  const service: LocalService = await startLocalService({
    dataDir,
    apiKeys: [TEST_API_KEY],
    allowPrivateWebhooks: true,
    credits: 10_000_000,
    concurrencyPerModel: 4,
    faults: { modelDurationMs: { [LONG_FORM]: MODEL_MS, [REVOICE]: MODEL_MS, [UPSCALE]: 5_000 } },
  });
  const { bridge, endpointId } = await startRegisteredBridge({ serviceUrl: service.url, temporalAddress: env.address, taskQueue, logLevel: 'warn' });
  const serviceClient = createServiceClient({ baseUrl: service.url, apiKey: TEST_API_KEY });
  const worker = await createReelflowWorker({ connection: env.nativeConnection, client: env.client, taskQueue, service: serviceClient, workflowBundle: bundle });
  const running = worker.run();
  const audio = silentWavDataUri(1, 8000);
  const statusDelta = async (fn: () => Promise<unknown>) => {
    const before = service.counters().statusCalls;
    await fn();
    return service.counters().statusCalls - before;
  };
  const results: Record<string, unknown> = {};
  try {
    // 1. Hand-offs, webhook path.
    const webhookNames = Array.from({ length: PIPELINES }, (_, i) => `bench-wh-${i}`);
    const whStatus = await statusDelta(() => runPipelines(env.client, taskQueue, webhookNames.map((n) => chainSpec(n, audio, service.url)), service.url));
    process.stdout.write(`webhook path done (${Math.round((Date.now() - started) / 1000)} s)\n`);
    // A finished clip to feed the 5 s upscale jobs.
    const clip = service.jobs().find((j) => j.model === LONG_FORM && j.status === 'COMPLETED')!;
    const clipUrl = (await serviceClient.result(clip.id)).videos[0]!.url;
    const upscaleSpec = (name: string) => pipeline(name).step('upscale', UPSCALE, { video_url: clipUrl }).build({ allowedOrigins: [service.url] });
    const wh5 = await statusDelta(() => runPipelines(env.client, taskQueue, Array.from({ length: CALL_JOBS }, (_, i) => upscaleSpec(`bench-wh5-${i}`)), service.url));

    // 2. Polling fallback: no endpoint registered any more.
    await api(service.url, 'DELETE', `/v1/webhooks/endpoints/${endpointId}`);
    const pollNames = Array.from({ length: PIPELINES }, (_, i) => `bench-poll-${i}`);
    const fastPacing = { firstPollSeconds: POLL_FIRST_S, factor: 2, capSeconds: 4 * POLL_FIRST_S };
    const pollStatus = await statusDelta(() => runPipelines(env.client, taskQueue, pollNames.map((n) => chainSpec(n, audio, service.url)), service.url, fastPacing));
    process.stdout.write(`polling fallback done (${Math.round((Date.now() - started) / 1000)} s)\n`);
    const poll5Pacing = { firstPollSeconds: 5, factor: 2, capSeconds: 300 };
    const poll5 = await statusDelta(() => runPipelines(env.client, taskQueue, Array.from({ length: CALL_JOBS }, (_, i) => upscaleSpec(`bench-poll5-${i}`)), service.url, poll5Pacing));

    // 3. Naive client.
    const naiveSteps: NaiveStep[] = [
      { model: LONG_FORM, input: () => ({ image_urls: [PIXEL_PNG], duration: '4', resolution: '480p' }) },
      ...Array.from({ length: STEPS }, (): NaiveStep => ({ model: REVOICE, input: (prev) => ({ video_url: prev, audio_url: audio }) })),
    ];
    let naiveChains: string[][] = [];
    const naiveStatus = await statusDelta(async () => {
      naiveChains = (await Promise.all(Array.from({ length: PIPELINES }, () => runNaiveChain(service.url, TEST_API_KEY, naiveSteps)))).map((r) => r.requestIds);
    });
    process.stdout.write(`naive client done (${Math.round((Date.now() - started) / 1000)} s)\n`);
    const naive5 = await statusDelta(() => Promise.all(Array.from({ length: CALL_JOBS }, () => runNaiveChain(service.url, TEST_API_KEY, [{ model: UPSCALE, input: () => ({ video_url: clipUrl }) }]))));

    const jobs = service.jobs();
    const latency = {
      webhook: stats(reelflowHandoffs(jobs, webhookNames)),
      polling: stats(reelflowHandoffs(jobs, pollNames)),
      naive: stats(naiveHandoffs(jobs, naiveChains)),
    };
    const jobsPerChain = STEPS + 1;
    const defaultPacing = resolvePacing(MODELS[UPSCALE].expectedRunSeconds);
    const reelflowPolls = (seconds: number) => {
      // Polls until the first one at or after completion, default pacing of the upscale model.
      let k = 0;
      while (pollOffsetSeconds(defaultPacing, k) < seconds) k += 1;
      return k + 1;
    };
    const calls = {
      '5s (measured)': {
        webhook: wh5 / CALL_JOBS,
        polling: poll5 / CALL_JOBS,
        naive: naive5 / CALL_JOBS,
        note: `${CALL_JOBS} upscale jobs of ≥5 s per mode; polling with firstPollSeconds=5`,
      },
      '60s (computed)': { webhook: 0, polling: reelflowPolls(60), naive: Math.ceil(60_000 / NAIVE_POLL_MS), note: 'reelflow default pacing (first poll at the model expected run time 60 s, ×2, cap 300 s); naive ⌈60/0.5⌉' },
      '600s (computed)': { webhook: 0, polling: reelflowPolls(600), naive: Math.ceil(600_000 / NAIVE_POLL_MS), note: 'as above' },
      'chain jobs (measured)': { webhook: whStatus / (PIPELINES * jobsPerChain), polling: pollStatus / (PIPELINES * jobsPerChain), naive: naiveStatus / (PIPELINES * jobsPerChain), note: `${MODEL_MS} ms jobs + render time` },
    };
    Object.assign(results, {
      machine: { nproc: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30), node: process.version, cpu: os.cpus()[0]?.model },
      settings: { PIPELINES, STEPS, MODEL_MS, POLL_FIRST_S, CALL_JOBS, naivePollMs: NAIVE_POLL_MS },
      latencyMs: latency,
      ratios: {
        'naive/webhook p50': latency.naive.p50 / latency.webhook.p50,
        'naive/webhook p99': latency.naive.p99 / latency.webhook.p99,
        'naive/polling p50': latency.naive.p50 / latency.polling.p50,
        'naive/polling p99': latency.naive.p99 / latency.polling.p99,
      },
      statusCallsPerJob: calls,
      seconds: Math.round((Date.now() - started) / 1000),
    });
    console.log('\nHand-off latency (ms, service clock: completedAt → next submittedAt)');
    console.table(latency);
    console.log('Ratios baseline/reelflow');
    console.table(results.ratios as Record<string, number>);
    console.log('Status calls per job');
    console.table(calls);
    writeBenchJson('handoff', results);
  } finally {
    worker.shutdown();
    await running;
    await bridge.close();
    await serviceClient.close();
    await service.close();
    await env.teardown();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

runBench(main);
