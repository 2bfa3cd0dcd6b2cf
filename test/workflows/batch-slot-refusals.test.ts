import type { Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTimeSkippingServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG, TEST_API_KEY, startTestService, type TestService } from '../helpers/local-service';
import { testRouteStore } from '../helpers/route-store';
import { bundleReelflowWorkflows, eventually, startTestBatch } from '../integration/workflow-harness';
import { createServiceClient } from '../../src/client/service-client';
import type { ServiceClient } from '../../src/client/types';
import { pipeline, type PipelineSpec } from '../../src/pipeline-spec';
import { createReelflowWorker, mediaFromEnv } from '../../src/workers/worker';
import { batchProgressQuery, resumeBatchUpdate } from '../../src/workflows/definitions';
import type { BatchProgress } from '../../src/workflows/batch-types';
import { SUBMIT_MAX_ATTEMPTS } from '../../src/contract';
import type { MediaDeps } from '../../src/activities';

/**
 * 429s past the bound pause a batch under the account's slots (docs/decisions/account-slots.md) as
 * they do without caps. The time-skipping server, because the submit activity's attempts back off for
 * minutes of workflow time; everything else real: the worker with its activities, the local service
 * (stub renders) answering every submit 429, and a SQLite route store capping the account at one job
 * in flight, so every item's retries contend with the others' waits for that one slot.
 */

const TASK_QUEUE = 'batch-slot-refusals';
/** The worker's client tries each submit this often inside one activity attempt. */
const CLIENT_ATTEMPTS = 2;

let env: TestWorkflowEnvironment;
let service: TestService;
let client: ServiceClient & { close(): Promise<void> };
let media: MediaDeps;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  const [bundle, server] = await Promise.all([bundleReelflowWorkflows(), startTimeSkippingServer()]);
  env = server;
  service = await startTestService({ render: 'stub', concurrencyPerModel: 4 });
  const fast = { maxAttempts: CLIENT_ATTEMPTS, initialDelayMs: 50, maxDelayMs: 200, jitter: 0 };
  client = createServiceClient({ baseUrl: service.url, apiKey: TEST_API_KEY, retry: fast, submitRetry: fast });
  media = mediaFromEnv(service.url, { ...process.env, REELFLOW_STATE_DIR: service.dataDir });
  worker = await createReelflowWorker({
    connection: env.nativeConnection,
    client: env.client,
    taskQueue: TASK_QUEUE,
    service: client,
    workflowBundle: bundle,
    preflight: { trustedOrigins: [service.url] },
    media,
    routeStore: testRouteStore(TASK_QUEUE),
    slotCaps: { account: 1, models: {} },
  });
  running = worker.run();
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await running;
  await client?.close();
  await service?.close();
  await env?.teardown();
});

const item = (name: string): PipelineSpec =>
  pipeline(name)
    .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
    .build();

const fastPolls = { firstPollSeconds: 0.3, factor: 1, capSeconds: 0.3, earlyCheckSeconds: 0 };

/**
 * The batch's progress once `done` holds for it, letting workflow time pass a few seconds at a time in
 * between (not by awaiting its result: with the batch paused, the server would skip to its timeout).
 */
async function progressWhen(handle: WorkflowHandle, done: (progress: BatchProgress) => boolean, what: string) {
  return eventually(
    async () => {
      const progress = await handle.query(batchProgressQuery);
      if (done(progress)) return progress;
      await env.sleep('5 seconds');
      return undefined;
    },
    what,
    30_000,
  );
}

describe('account refusals under the slot caps (time-skipping server, real activities and service)', () => {
  it('pauses a batch once every submit attempt of an item answered 429, though the items contend for one slot, and completes after the resume', async () => {
    service.service.setFaults({ submitErrorRate: 1, submitErrorStatus: 429, submitRetryAfterSeconds: 0 });
    const names = ['throttled-a', 'throttled-b', 'throttled-c'];
    const handle = await startTestBatch(env.client, TASK_QUEUE, media.store, {
      name: 'throttled',
      specs: names.map(item),
      concurrency: names.length,
      defaultPacing: fastPolls,
      publishSearchAttributes: false,
    });

    // Every item ends up waiting for the resume, none failed: each kept its slot across its own
    // attempts (its retries never queued behind the others), gave it back after the last one.
    const paused = await progressWhen(
      handle,
      (p) => p.status === 'paused' && p.paused?.waiting.length === names.length,
      'the batch to pause with every item waiting',
    );
    expect(paused).toMatchObject({ failed: 0, cancelled: 0, completed: 0 });
    expect(paused.paused?.code).toBe('rate_limited');
    expect(paused.paused?.reason).toMatch(new RegExp(`429 after ${SUBMIT_MAX_ATTEMPTS} submit attempts`));
    const refusals = new Map<string, number>();
    for (const fault of service.service.injectedFaults())
      if (fault.kind === 'submit_error' && fault.status === 429 && fault.idempotencyKey)
        refusals.set(fault.idempotencyKey, (refusals.get(fault.idempotencyKey) ?? 0) + 1);
    // The bound, counted at the service: every attempt of one activity, no restart after a wait.
    expect([...refusals.values()]).toEqual(Array(names.length).fill(SUBMIT_MAX_ATTEMPTS * CLIENT_ATTEMPTS));
    // A paused item holds no slot and no place in the queue.
    expect(await testRouteStore(TASK_QUEUE).slots.snapshot()).toEqual({ heldByModel: {}, heldByKey: {}, waiting: [] });

    service.service.setFaults({ submitErrorRate: 0 });
    expect(await handle.executeUpdate(resumeBatchUpdate)).toMatchObject({ code: 'rate_limited', resumed: 3 });
    const result = (await handle.result()) as BatchProgress;
    expect(result).toMatchObject({ status: 'completed', total: 3, completed: 3, failed: 0 });
    // Resubmitted with the refused keys: one job each.
    const jobs = service.service.jobs().map((job) => job.idempotencyKey);
    expect(jobs.sort()).toEqual([...refusals.keys()].sort());
  });
});
