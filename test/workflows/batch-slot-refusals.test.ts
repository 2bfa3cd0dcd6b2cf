import * as fs from 'node:fs';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTimeSkippingServer } from '../helpers/temporal';
import {
  LONG_FORM,
  PIXEL_PNG,
  TEST_API_KEY,
  startTestService,
  tempDataDir,
  type TestService,
} from '../helpers/local-service';
import { testRouteStore } from '../helpers/route-store';
import { bundleReelflowWorkflows, eventually, startTestBatch } from '../integration/workflow-harness';
import { createServiceClient } from '../../src/client/service-client';
import { pipeline, type PipelineSpec } from '../../src/pipeline-spec';
import { createReelflowWorker, mediaFromEnv } from '../../src/workers/worker';
import { batchProgressQuery, resumeBatchUpdate } from '../../src/workflows/definitions';
import type { BatchProgress } from '../../src/workflows/batch-types';
import { SUBMIT_MAX_ATTEMPTS } from '../../src/contract';
import type { MediaDeps } from '../../src/activities';

/**
 * Account-level refusals pause a batch under the account's slots (docs/decisions/account-slots.md) as
 * they do without caps: 429s past the bound, a refused key. The time-skipping server, because the
 * submit activity's attempts back off for minutes of workflow time; everything else real: the worker
 * with its activities, the local service (stub renders) and a SQLite route store capping the account
 * at one job in flight, so every item's retries contend with the others' waits for that one slot.
 */

/** The worker's client tries each submit this often inside one activity attempt. */
const CLIENT_ATTEMPTS = 2;
/** An API key the service does not know until its restart: every call answers 401 `unauthorized` till then. */
const REFUSED_KEY = 'refused-key-0123456789';

let env: TestWorkflowEnvironment;
let bundle: WorkflowBundleWithSourceMap;
let service: TestService;
let media: MediaDeps;
const stops: (() => Promise<void>)[] = [];
/** The service's data folder, kept across its restart (its journal, and the media store of the batches). */
const dataDir = tempDataDir();
const serviceOptions = { render: 'stub', concurrencyPerModel: 4, dataDir } as const;

beforeAll(async () => {
  [bundle, env] = await Promise.all([bundleReelflowWorkflows(), startTimeSkippingServer()]);
  service = await startTestService(serviceOptions);
  media = mediaFromEnv(service.url, { ...process.env, REELFLOW_STATE_DIR: dataDir });
}, 120_000);

afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await service?.close();
  await env?.teardown();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** A worker on `taskQueue` calling the service with `apiKey`, its account capped at one slot (stopped in afterAll). */
async function startWorker(taskQueue: string, apiKey = TEST_API_KEY): Promise<void> {
  const fast = { maxAttempts: CLIENT_ATTEMPTS, initialDelayMs: 50, maxDelayMs: 200, jitter: 0 };
  const client = createServiceClient({ baseUrl: service.url, apiKey, retry: fast, submitRetry: fast });
  const worker = await createReelflowWorker({
    connection: env.nativeConnection,
    client: env.client,
    taskQueue,
    service: client,
    workflowBundle: bundle,
    preflight: { trustedOrigins: [service.url] },
    media,
    routeStore: testRouteStore(taskQueue),
    slotCaps: { account: 1, models: {} },
  });
  const running = worker.run();
  stops.push(async () => {
    worker.shutdown();
    await running;
    await client.close();
  });
}

/** Three one-step items, all started at once: two wait for the slot while one holds it. */
function startBatch(taskQueue: string, name: string): Promise<WorkflowHandle> {
  return startTestBatch(env.client, taskQueue, media.store, {
    name,
    specs: [`${name}-a`, `${name}-b`, `${name}-c`].map(item),
    concurrency: 3,
    defaultPacing: fastPolls,
    publishSearchAttributes: false,
  });
}

/** Idempotency-Keys of the submits the service refused with an injected 429, with their counts. */
function refusedKeys(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const fault of service.service.injectedFaults())
    if (fault.kind === 'submit_error' && fault.status === 429 && fault.idempotencyKey)
      counts.set(fault.idempotencyKey, (counts.get(fault.idempotencyKey) ?? 0) + 1);
  return counts;
}

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

/** A route store's slots with none in use and nobody waiting, as while every item of a paused batch waits. */
const NO_SLOTS = { heldByModel: {}, heldByKey: {}, waiting: [] };

describe('account refusals under the slot caps (time-skipping server, real activities and service)', () => {
  it('pauses a batch once every submit attempt of an item answered 429, though the items contend for one slot, and completes after the resume', async () => {
    const queue = 'slot-refusals-429';
    await startWorker(queue);
    service.service.setFaults({ submitErrorRate: 1, submitErrorStatus: 429, submitRetryAfterSeconds: 0 });
    const handle = await startBatch(queue, 'throttled');

    // Every item ends up waiting for the resume, none failed: each kept its slot across its own
    // attempts (its retries never queued behind the others) and gave it back after the last one.
    const paused = await progressWhen(
      handle,
      (p) => p.status === 'paused' && p.paused?.waiting.length === 3,
      'the batch to pause with every item waiting',
    );
    expect(paused).toMatchObject({ failed: 0, cancelled: 0, completed: 0 });
    expect(paused.paused?.code).toBe('rate_limited');
    expect(paused.paused?.reason).toMatch(new RegExp(`429 after ${SUBMIT_MAX_ATTEMPTS} submit attempts`));
    // The bound, counted at the service: every attempt of one activity, no restart after a wait.
    const refusals = refusedKeys();
    expect([...refusals.values()]).toEqual([3, 3, 3].fill(SUBMIT_MAX_ATTEMPTS * CLIENT_ATTEMPTS));
    expect(await testRouteStore(queue).slots.snapshot()).toEqual(NO_SLOTS);

    service.service.setFaults({ submitErrorRate: 0 });
    expect(await handle.executeUpdate(resumeBatchUpdate)).toMatchObject({ code: 'rate_limited', resumed: 3 });
    const result = (await handle.result()) as BatchProgress;
    expect(result).toMatchObject({ status: 'completed', total: 3, completed: 3, failed: 0 });
    // Resubmitted with the refused keys: one job each.
    const jobs = service.service.jobs().filter((job) => job.idempotencyKey?.includes('throttled-'));
    expect(jobs.map((job) => job.idempotencyKey).sort()).toEqual([...refusals.keys()].sort());
  });

  it('pauses a batch on a refused key (401) with every slot given back, and completes when the key is accepted again and the batch resumed', async () => {
    const queue = 'slot-refusals-401';
    await startWorker(queue, REFUSED_KEY);
    const handle = await startBatch(queue, 'refused-key');

    const paused = await progressWhen(
      handle,
      (p) => p.status === 'paused' && p.paused?.waiting.length === 3,
      'the batch to pause with every item waiting',
    );
    expect(paused).toMatchObject({ failed: 0, cancelled: 0, completed: 0 });
    expect(paused.paused?.code).toBe('unauthorized');
    expect(await testRouteStore(queue).slots.snapshot()).toEqual(NO_SLOTS);

    // The account takes the key (the service restarts knowing it, on the same port and data), then the resume.
    await service.service.close();
    service = await startTestService({
      ...serviceOptions,
      port: service.service.port,
      apiKeys: [TEST_API_KEY, REFUSED_KEY],
    });
    expect(await handle.executeUpdate(resumeBatchUpdate)).toMatchObject({ code: 'unauthorized', resumed: 3 });
    const result = (await handle.result()) as BatchProgress;
    expect(result).toMatchObject({ status: 'completed', total: 3, completed: 3, failed: 0 });
    const keys = service.service
      .jobs()
      .flatMap((job) => (job.idempotencyKey?.includes('refused-key-') ? [job.idempotencyKey] : []));
    expect(new Set(keys).size).toBe(3);
    expect(keys).toHaveLength(3);
  });
});
