import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowBundleWithSourceMap, Worker } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createServiceClient } from '../../src/client/service-client';
import { threeStepPipeline } from '../../src/pipeline-spec';
import type { MediaDeps } from '../../src/activities';
import { createReelflowWorker, mediaFromEnv } from '../../src/workers/worker';
import type { BatchProgress } from '../../src/workflows/batch-types';
import { SEARCH_ATTRIBUTE_KEYS, pipelineWorkflowId } from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { PIXEL_PNG, TEST_API_KEY, startTestService, type TestService } from '../helpers/local-service';
import { startDevServer } from '../helpers/temporal';
import { jsonOf, runCli } from './cli-process';
import {
  bundleReelflowWorkflows,
  eventually,
  silentWavDataUri,
  startTestBatch,
  startTestBridge,
  testBatchResults,
  type TestBridge,
} from './workflow-harness';
import { jobOutput } from '../helpers/step-summary';

/**
 * Resume, don't repay: a three-step pipeline fails at step 3; `reelflow resume` and
 * `reelflow batch --rerun-failed` (real CLI processes) start new runs that carry steps 1–2 and submit
 * only step 3. The local service's own job list and counters are the proof.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let svc: TestService;
let worker: Worker;
let running: Promise<void>;
let closeClient: () => Promise<void>;
let bridge: TestBridge;
let cliEnv: Record<string, string>;
let dir: string;
let mediaStore: string;
let media: MediaDeps;
const TASK_QUEUE = 'workflow-resume';
/** Fast polls: a FAILED job sends no event, so its failure is learned by a poll. */
const PACING = { firstPollSeconds: 0.5, factor: 1.5, capSeconds: 1 };

beforeAll(async () => {
  [bundle, env, svc] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
    startTestService({ credits: 1_000_000 }),
  ]);
  const client = createServiceClient({ baseUrl: svc.url, apiKey: TEST_API_KEY, idempotency: 'honoured' });
  const sideClient = createServiceClient({ baseUrl: svc.url, apiKey: TEST_API_KEY });
  closeClient = async () => {
    await client.close();
    await sideClient.close();
  };
  // Completion events as the bridge delivers them (runs the CLI starts poll at the models' own pace).
  bridge = await startTestBridge(svc, env, TASK_QUEUE);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-resume-'));
  // One media store for the worker and the CLI: a batch's manifest and result pages live there.
  mediaStore = `file://${path.join(dir, 'media')}`;
  media = mediaFromEnv(svc.url, { REELFLOW_MEDIA_STORE: mediaStore });
  worker = await createReelflowWorker({
    connection: env.nativeConnection,
    client: env.client,
    taskQueue: TASK_QUEUE,
    service: client,
    workflowBundle: bundle,
    media,
  });
  running = worker.run();
  cliEnv = {
    TEMPORAL_ADDRESS: env.address,
    REELFLOW_TASK_QUEUE: TASK_QUEUE,
    REELFLOW_SERVICE_URL: svc.url,
    REELFLOW_API_KEY: TEST_API_KEY,
    REELFLOW_SERVICE_IDEMPOTENCY: 'honoured',
    REELFLOW_MEDIA_STORE: mediaStore,
  };
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  worker?.shutdown();
  await running;
  await closeClient?.();
  await svc?.close();
  await env?.teardown();
});

const spec = (name: string) =>
  threeStepPipeline({ imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(2), duration: '4' }, name, {
    allowedOrigins: [svc.url],
  });
const jobsOf = (name: string, step: string) =>
  svc.service.jobs().filter((j) => j.idempotencyKey?.startsWith(`reelflow:${name}/job/${step}:`));

/** Makes the pipeline's third step fail: every job that starts after its second one is running fails. */
async function failStepThree(name: string): Promise<void> {
  svc.service.setFaults({ modelDurationMs: 1_500 });
  await eventually(() => jobsOf(name, 'revoice').some((j) => j.status === 'IN_PROGRESS'), `${name}: step 2 running`);
  svc.service.setFaults({ failureRate: 1 });
  await eventually(() => jobsOf(name, 'upscale').some((j) => j.status === 'FAILED'), `${name}: step 3 failed`);
  svc.service.setFaults({ failureRate: 0, modelDurationMs: 0 });
}

it('reelflow resume after a failure at step 3 submits nothing for steps 1 and 2, and keeps the run’s priority', async () => {
  const name = 'resume-three';
  // As a batch item of `reelflow batch --priority 2 --fairness-weight 3` starts.
  const priority = { priorityKey: 2, fairnessKey: 'batch/resumed-items', fairnessWeight: 3 };
  const handle = await env.client.workflow.start('pipelineWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: pipelineWorkflowId(name),
    args: [{ spec: spec(name), uriRules: { allowedOrigins: [svc.url] }, defaultPacing: PACING }],
    priority,
  });
  await failStepThree(name);
  await handle.result().catch(() => undefined);
  const earlierRunId = (await handle.describe()).runId;
  const before = svc.service.counters();

  const result = await runCli(['resume', name, '--json'], cliEnv);
  expect(result.code).toBe(0);
  const summary = jsonOf<PipelineSummary & { runId: string }>(result);
  expect(summary.status).toBe('completed');
  // The service's job list: steps 1 and 2 were paid once, step 3 twice (failed and refunded, then completed).
  expect(jobsOf(name, 'generate')).toHaveLength(1);
  expect(jobsOf(name, 'revoice')).toHaveLength(1);
  expect(
    jobsOf(name, 'upscale')
      .map((j) => j.status)
      .sort(),
  ).toEqual(['COMPLETED', 'FAILED']);
  expect(svc.service.counters().submits - before.submits).toBe(1);
  expect(summary.steps.map((s) => [s.id, s.status, s.carriedFrom ?? null])).toEqual([
    ['generate', 'completed', earlierRunId],
    ['revoice', 'completed', earlierRunId],
    ['upscale', 'completed', null],
  ]);
  expect(summary.resumedFrom).toMatchObject({
    workflowId: pipelineWorkflowId(name),
    runId: earlierRunId,
    carriedSteps: ['generate', 'revoice'],
  });
  // Its jobs queue for the account's slots in the same place as before (Temporal's priority of the new run).
  const resumed = await env.client.workflow.getHandle(pipelineWorkflowId(name), summary.runId).describe();
  expect(resumed.priority).toEqual(priority);
  // The new run paid only for step 3; the earlier run's ledger is linked, not repeated.
  const upscale = jobsOf(name, 'upscale').find((j) => j.status === 'COMPLETED')!;
  expect(summary.ledger.net).toBe(upscale.creditsCharged);
  expect(jobOutput(summary.outputs.upscale)?.videos[0]?.url).toContain(upscale.id);
}, 240_000);

it('reelflow batch --rerun-failed resumes the failed item from step 3, submitting nothing for steps 1 and 2', async () => {
  const name = 'batch-resume-item';
  const manifest = path.join(dir, 'batch.json');
  fs.writeFileSync(manifest, JSON.stringify({ name: 'resume-batch', items: [spec(name)] }));
  // The first batch with fast polls (the CLI has no pacing flag); its re-run goes through the CLI.
  const first = await startTestBatch(env.client, TASK_QUEUE, media.store, {
    name: 'resume-batch',
    specs: [spec(name)],
    uriRules: { allowedOrigins: [svc.url] },
    defaultPacing: PACING,
  });
  await failStepThree(name);
  const firstResults = await testBatchResults((await first.result()) as BatchProgress, media.store);
  expect(firstResults).toEqual([expect.objectContaining({ name, status: 'failed' })]);
  const before = svc.service.counters();

  const rerun = await runCli(['batch', manifest, '--rerun-failed', 'resume-batch', '--json'], cliEnv);
  expect(rerun.code).toBe(0);
  expect(rerun.stderr).toContain('2 completed step(s) carried');
  expect(jsonOf(rerun).results).toEqual([expect.objectContaining({ name, status: 'completed' })]);
  expect(jobsOf(name, 'generate')).toHaveLength(1);
  expect(jobsOf(name, 'revoice')).toHaveLength(1);
  expect(jobsOf(name, 'upscale')).toHaveLength(2);
  expect(svc.service.counters().submits - before.submits).toBe(1);
}, 240_000);

it('a resume whose carried output no longer answers refuses and names --fresh', async () => {
  const name = 'resume-gone';
  const handle = await env.client.workflow.start('pipelineWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: pipelineWorkflowId(name),
    args: [{ spec: spec(name), uriRules: { allowedOrigins: [svc.url] }, defaultPacing: PACING }],
  });
  await failStepThree(name);
  await handle.result().catch(() => undefined);
  // The output files of step 1 disappear from the service's file store.
  const generate = jobsOf(name, 'generate')[0]!;
  fs.rmSync(path.join(svc.dataDir, 'files', generate.id), { recursive: true, force: true });
  const before = svc.service.counters();
  const result = await runCli(['resume', name], cliEnv);
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/output of step generate .* no longer answers/);
  expect(result.stderr).toContain('--fresh');
  expect(svc.service.counters().submits).toBe(before.submits);
}, 240_000);
