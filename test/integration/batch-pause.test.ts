import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError } from '@temporalio/client';
import { startDevServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG, TEST_ADMIN_KEY, TEST_API_KEY } from '../helpers/local-service';
import { pipeline, type PipelineSpec } from '../../src/pipeline-spec';
import { SEARCH_ATTRIBUTE_KEYS, batchProgressQuery, batchWorkflowId } from '../../src/workflows/definitions';
import type { BatchProgress } from '../../src/workflows/batch-types';
import {
  bundleReelflowWorkflows,
  eventually,
  startHarness,
  startTestBatch,
  testBatchResults,
  type Harness,
} from './workflow-harness';
import { jsonOf, runCli } from './cli-process';

/**
 * A batch pauses on an account-level refusal instead of failing its items (docs/batches.md, "Paused
 * batches"): the local service starts with credits for three of six long-form jobs (80 credits each).
 * Polls only (no bridge): the pause does not depend on webhooks.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let dir: string;
let cliEnv: Record<string, string>;
const TASK_QUEUE = 'batch-pause-test';
const PRICE = 80;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reelflow-batch-pause-'));
  process.env.REELFLOW_MEDIA_STORE = `file://${path.join(dir, 'media')}`;
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  h = await startHarness(env, bundle, TASK_QUEUE, { concurrencyPerModel: 2, credits: 3 * PRICE });
  cliEnv = {
    TEMPORAL_ADDRESS: env.address,
    REELFLOW_TASK_QUEUE: TASK_QUEUE,
    REELFLOW_SERVICE_URL: h.service.url,
    REELFLOW_API_KEY: TEST_API_KEY,
    REELFLOW_MEDIA_STORE: process.env.REELFLOW_MEDIA_STORE,
  };
}, 120_000);

afterAll(async () => {
  await h?.close();
  await env?.teardown();
  delete process.env.REELFLOW_MEDIA_STORE;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const item = (name: string): PipelineSpec =>
  pipeline(name)
    .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
    .build();

const fastPolls = { firstPollSeconds: 0.3, factor: 1, capSeconds: 0.3, earlyCheckSeconds: 0 };

describe('paused batches', () => {
  it('pauses on insufficient_credits with the reason, fails nothing for it, and completes every item after a top-up and reelflow batch resume', async () => {
    const names = ['pause-a', 'pause-b', 'pause-c', 'pause-d', 'pause-e', 'pause-f'];
    const handle = await startTestBatch(env.client, TASK_QUEUE, h.media.store, {
      name: 'credits-run-out',
      specs: names.map(item),
      concurrency: 2,
      defaultPacing: fastPolls,
      publishSearchAttributes: false,
    });

    // Three items are paid for; the fourth submit is refused: the batch pauses and counts nothing failed.
    const paused = await eventually(async () => {
      const progress = await handle.query(batchProgressQuery);
      return progress.status === 'paused' && progress.completed === 3 && progress.running.length === 1 && progress;
    }, 'the batch to pause with three items completed');
    expect(paused.paused).toMatchObject({ code: 'insufficient_credits', waiting: paused.running });
    expect(paused.paused?.reason).toMatch(/the balance is 0/);
    expect(paused).toMatchObject({ failed: 0, cancelled: 0, skipped: 0 });

    // What reelflow status and the Temporal UI read.
    const status = await runCli(['status', 'batch/credits-run-out', '--json'], cliEnv);
    expect(jsonOf<{ progress: BatchProgress }>(status).progress).toMatchObject({
      status: 'paused',
      paused: { code: 'insufficient_credits' },
    });
    const metadata = (await env.client.workflow
      .getHandle(batchWorkflowId('credits-run-out'))
      .query('__temporal_workflow_metadata')) as { currentDetails?: string };
    expect(metadata.currentDetails).toContain('paused');
    expect(metadata.currentDetails).toContain('insufficient_credits');

    // A lone pipeline (not in a batch) still fails at once with the reason.
    const lone = await env.client.workflow.start('pipelineWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId: 'pipeline/pause-lone',
      args: [{ spec: item('pause-lone'), defaultPacing: fastPolls, publishSearchAttributes: false }],
    });
    const loneError = await lone.result().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(loneError).toBeInstanceOf(WorkflowFailedError);
    expect((loneError as WorkflowFailedError).cause?.message).toMatch(/ServiceProblem:insufficient_credits/);

    const topUp = await h.service.call('POST', '/v1/admin/credits', {
      key: TEST_ADMIN_KEY,
      body: { credits: 3 * PRICE },
    });
    expect(topUp.status).toBe(200);
    const resumed = await runCli(['batch', 'resume', 'batch/credits-run-out', '--json'], cliEnv);
    expect(resumed.code).toBe(0);
    expect(jsonOf(resumed)).toMatchObject({ code: 'insufficient_credits', resumed: 1 });

    const result = (await handle.result()) as BatchProgress;
    expect(result).toMatchObject({ status: 'completed', total: 6, completed: 6, failed: 0, cancelled: 0 });
    expect(result.paused).toBeUndefined();
    // Closed: nothing to resume (exit 1).
    const again = await runCli(['batch', 'resume', 'batch/credits-run-out'], cliEnv);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/has closed \(completed\); nothing to resume/);
    const results = await testBatchResults(result, h.media.store);
    expect(results.map((r) => r.status)).toEqual(Array(6).fill('completed'));

    // One job per item at the service, each under its own Idempotency-Key, each paid once.
    const jobs = h.service.service.jobs().filter((job) => /pause-[a-f]\/job\//.test(job.idempotencyKey ?? ''));
    expect(jobs).toHaveLength(6);
    expect(new Set(jobs.map((job) => job.idempotencyKey)).size).toBe(6);
    expect(result.credits).toEqual({ charged: 6 * PRICE, refunded: 0, net: 6 * PRICE });
  });

  it('refuses to resume a running batch that is not paused (exit 2, the reason)', async () => {
    // Its one item waits for a person: the batch runs, unpaused, until it is cancelled.
    const held: PipelineSpec = {
      name: 'pause-held',
      steps: [{ id: 'hold', op: 'approval', input: { note: 'held open' }, timeoutHours: 72, onTimeout: 'reject' }],
    };
    const handle = await startTestBatch(env.client, TASK_QUEUE, h.media.store, {
      name: 'not-paused',
      specs: [held],
      publishSearchAttributes: false,
    });
    await eventually(
      async () => (await handle.query(batchProgressQuery)).running.length === 1,
      'the held item to start',
    );
    const refused = await runCli(['batch', 'resume', 'batch/not-paused'], cliEnv);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/the batch is not paused: nothing to resume/);
    await handle.cancel();
    await handle.result().catch(() => undefined);
  });
});
