import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError } from '@temporalio/client';
import type { ApplicationFailure } from '@temporalio/common';
import { createActivities, type PreparedChain } from '../../src/activities';
import { createServiceClient } from '../../src/client/service-client';
import type { JobResult } from '../../src/contract';
import { createPreparedSubmitter, createRouteSubscriber, PREPARED_STATE, type RouteStore } from '../../src/routing';
import { threeStepPipeline } from '../../src/pipeline-spec';
import { pipelineStartOptions } from '../../src/pipeline-spec/ui-text';
import {
  cancelStepUpdate,
  pipelineProgressQuery,
  pipelineWorkflowId,
  SEARCH_ATTRIBUTE_KEYS,
} from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { PIXEL_PNG, startTestService, TEST_API_KEY, type TestService } from '../helpers/local-service';
import { testRouteStore } from '../helpers/route-store';
import { startDevServer } from '../helpers/temporal';
import {
  bundleReelflowWorkflows,
  eventually,
  maybeRecordHistory,
  silentWavDataUri,
  startHarness,
  startTestBridge,
  type Harness,
  type TestBridge,
} from './workflow-harness';

/**
 * Prepared submits (src/routing/prepared.ts) with the real parts: the local service (which honours
 * Idempotency-Key), the bridge registered as its webhook endpoint, the route store, a dev server.
 * The bridge submits a pipeline's next step as soon as the completion is committed, with the key the
 * pipeline prepared; the pipeline adopts that job. A pipeline that ends early revokes, and a job the
 * bridge submitted meanwhile is cancelled and refunded; a bridge that died between its POST and its
 * record gets the same job again; a worker whose service may not honour the key prepares nothing.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
const running: { h: Harness; bridge: TestBridge }[] = [];

beforeAll(async () => {
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
}, 120_000);

afterAll(async () => {
  for (const { h, bridge } of running) {
    await bridge.stop();
    await h.close();
  }
  await env?.teardown();
});

async function stack(name: string, options: { submits?: boolean; stubHoldMs?: number } = {}) {
  const h = await startHarness(
    env,
    bundle,
    `prepared-${name}`,
    options.stubHoldMs !== undefined ? { render: 'stub', stubHoldMs: options.stubHoldMs } : {},
    { idempotency: 'honoured' },
  );
  const bridge = await startTestBridge(h.service, env, h.taskQueue, { submits: options.submits ?? true });
  running.push({ h, bridge });
  return h;
}

async function startThreeStep(h: Harness, name: string) {
  const rules = { allowedOrigins: [h.service.url] };
  const spec = threeStepPipeline({ imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(), duration: '4' }, name, rules);
  return env.client.workflow.start('pipelineWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: pipelineWorkflowId(spec.name),
    args: [{ spec, uriRules: rules }],
    ...pipelineStartOptions(spec),
  });
}

/** The service's jobs of one pipeline (its keys name it), oldest first. */
const jobsOf = (h: Harness, name: string) =>
  h.service.service
    .jobs()
    .filter((job) => job.idempotencyKey?.includes(`:${name}/`))
    .sort((a, b) => a.receivedAt - b.receivedAt);

describe('a pipeline whose next steps read only the step before them', () => {
  it('has them submitted by the bridge, each job once, and adopts them', async () => {
    const h = await stack('bridge');
    const handle = await startThreeStep(h, 'prepared-bridge');
    const summary = (await handle.result()) as PipelineSummary;
    expect(summary.status).toBe('completed');
    // The replay test replays adopted submits (the bridge's signal carries the next job).
    await maybeRecordHistory(handle, 'pipeline-prepared-submits');
    expect(summary.steps.map((step) => step.attemptLog?.[0]?.submittedBy)).toEqual([undefined, 'bridge', 'bridge']);
    const jobs = jobsOf(h, 'prepared-bridge');
    expect(jobs.map((job) => [job.model, job.status])).toEqual([
      ['service-video-cinema-long-form-from-references', 'COMPLETED'],
      ['service-horizon-studio', 'COMPLETED'],
      ['service-upscale-video-fast', 'COMPLETED'],
    ]);
    expect(summary.steps.map((step) => step.requestIds)).toEqual(jobs.map((job) => [job.id]));
    // One submit activity ran (the first step's); the bridge's own submits are not the worker's calls.
    expect(h.calls.submit).toBe(1);
  }, 120_000);

  it('submits them itself, with the same keys, where the bridge has no service key', async () => {
    const h = await stack('no-key', { submits: false });
    const summary = (await (await startThreeStep(h, 'prepared-no-key')).result()) as PipelineSummary;
    expect(summary.status).toBe('completed');
    expect(summary.steps.map((step) => step.attemptLog?.[0]?.submittedBy)).toEqual([undefined, undefined, undefined]);
    expect(jobsOf(h, 'prepared-no-key')).toHaveLength(3);
    expect(h.calls.submit).toBe(3);
  }, 120_000);

  it('revokes when an operator cancelled the next step: the job the bridge submitted is cancelled and refunded', async () => {
    const h = await stack('cancel', { stubHoldMs: 1_500 });
    const handle = await startThreeStep(h, 'prepared-cancel');
    await eventually(async () => {
      const s = await handle.query(pipelineProgressQuery);
      return s.steps[1]?.status === 'running' && s.steps[1].requestIds.length === 1;
    }, 'the revoice step to run');
    await handle.executeUpdate(cancelStepUpdate, { args: [{ step: 'upscale', reason: 'not needed' }] });
    const failure = await handle.result().then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(((failure as WorkflowFailedError).cause as ApplicationFailure).type).toBe('StepCancelled');
    // Only the bridge submits an upscale here (the pipeline never started it); the pipeline's revoke cancelled it.
    const upscale = await eventually(
      () => jobsOf(h, 'prepared-cancel').find((job) => job.model === 'service-upscale-video-fast' && job.completedAt),
      'the upscale job to end',
    );
    expect(upscale.status).toBe('CANCELLED');
    expect(upscale.creditsRefunded).toBe(upscale.creditsCharged);
    await maybeRecordHistory(handle, 'pipeline-prepared-revoked');
  }, 120_000);
});

describe('the bridge and the worker around a prepared row', () => {
  let service: TestService;
  let store: RouteStore;
  const client = () => createServiceClient({ baseUrl: service.url, apiKey: TEST_API_KEY, idempotency: 'honoured' });
  // A literal-only next step: what it reads of the completed job does not matter here.
  const chain = (key: string): PreparedChain => ({
    steps: [
      {
        model: 'service-video-cinema-long-form-from-references',
        input: { image_urls: [PIXEL_PNG], duration: '4', resolution: '480p', aspect_ratio: '16:9' },
        idempotencyKey: key,
      },
    ],
  });
  const result = (requestId: string): JobResult => ({
    request_id: requestId,
    status: 'COMPLETED',
    model: 'service-horizon-studio',
    credits_used: 10,
    videos: [{ url: `${service.url}/files/x.mp4`, file_name: 'x.mp4', content_type: 'video/mp4' }],
  });
  let n = 0;
  const prepared = async (): Promise<{ requestId: string; key: string }> => {
    n += 1;
    const requestId = `req-done-${n}`;
    const key = `reelflow:rows/step-${n}:run:1`;
    await createRouteSubscriber(store).subscribe(requestId, 'pipeline/rows', { prepared: chain(key) });
    return { requestId, key };
  };
  const jobWithKey = (key: string) => service.service.jobs().filter((job) => job.idempotencyKey === key);

  beforeAll(async () => {
    service = await startTestService();
    store = testRouteStore('prepared-rows');
  });
  afterAll(() => service?.close());

  it('a revoke after the bridge submitted cancels that job at the service (refunded)', async () => {
    const { requestId, key } = await prepared();
    const submitted = await createPreparedSubmitter({ store, client: client(), serviceOrigin: service.url }).submitNext(
      requestId,
      result(requestId),
    );
    expect(submitted?.idempotencyKey).toBe(key);
    const activities = createActivities({ client: client(), routes: createRouteSubscriber(store) });
    expect(await activities.revokePreparedSubmits([requestId])).toEqual([submitted?.request.request_id]);
    const [job] = jobWithKey(key);
    expect(job?.status).toBe('CANCELLED');
    expect(job?.creditsRefunded).toBe(job?.creditsCharged);
  });

  it('a revoke while the bridge submits leaves the cancel to that bridge', async () => {
    const { requestId, key } = await prepared();
    // Another bridge took it and died before it settled; the pipeline revokes meanwhile.
    expect(await store.takePrepared(requestId, Date.now(), 30_000)).not.toBeNull();
    const activities = createActivities({ client: client(), routes: createRouteSubscriber(store) });
    expect(await activities.revokePreparedSubmits([requestId])).toEqual([]);
    const later = () => Date.now() + 60_000;
    const submitter = createPreparedSubmitter({ store, client: client(), serviceOrigin: service.url, now: later });
    expect(await submitter.submitNext(requestId, result(requestId))).toBeNull();
    expect(jobWithKey(key).map((job) => job.status)).toEqual(['CANCELLED']);
    expect((await store.revokePrepared(requestId))?.state).toBe(PREPARED_STATE.cancelledByBridge);
  });

  it('a bridge that died between its POST and its record: the next take gets the same job', async () => {
    const { requestId, key } = await prepared();
    await store.takePrepared(requestId, Date.now(), 30_000);
    const { input, model } = chain(key).steps[0]!;
    const lost = await client().submit(model as 'service-video-cinema-long-form-from-references', input as never, {
      idempotencyKey: key,
    });
    const later = () => Date.now() + 60_000;
    const submitter = createPreparedSubmitter({ store, client: client(), serviceOrigin: service.url, now: later });
    const again = await submitter.submitNext(requestId, result(requestId));
    expect(again?.request.request_id).toBe(lost.request_id);
    expect(jobWithKey(key)).toHaveLength(1);
  });

  it('an output outside the address rules is not submitted: the pipeline is left to do it', async () => {
    const { requestId, key } = await prepared();
    const reasons: string[] = [];
    const submitter = createPreparedSubmitter({
      store,
      client: client(),
      serviceOrigin: 'https://elsewhere.example',
      onGiveUp: (_, reason) => reasons.push(reason),
    });
    // The step reads the result's URL: plain http on loopback, and not the service's origin here.
    const readsOutput = { ...chain(key).steps[0]!, input: { image_urls: [{ $from: 'before' }], duration: '4' } };
    const other = `${requestId}-reads`;
    await createRouteSubscriber(store).subscribe(other, 'pipeline/rows', { prepared: { steps: [readsOutput] } });
    expect(await submitter.submitNext(other, result(other))).toBeNull();
    expect(reasons).toEqual([expect.stringMatching(/^address rules: image_urls\.0: must use https/)]);
    expect(jobWithKey(key)).toHaveLength(0);
  });

  it('the worker prepares only where the service honours Idempotency-Key', async () => {
    for (const idempotency of ['honoured', 'unknown'] as const) {
      const activities = createActivities({
        client: createServiceClient({ baseUrl: service.url, apiKey: TEST_API_KEY, idempotency }),
        routes: createRouteSubscriber(store),
      });
      n += 1;
      const next = `reelflow:worker/next-${n}:run:1`;
      const answer = await activities.submitAndSubscribe({
        model: 'service-video-cinema-long-form-from-references',
        input: chain('unused').steps[0]!.input,
        idempotencyKey: `reelflow:worker/step-${n}:run:1`,
        subscriberWorkflowId: 'pipeline/worker',
        prepareNext: chain(next),
      });
      if (answer.atCapacity) throw new Error('no cap configured');
      const row = await store.takePrepared(answer.request.request_id, Date.now(), 30_000);
      expect([idempotency, answer.preparedKey, row !== null]).toEqual(
        idempotency === 'honoured' ? [idempotency, next, true] : [idempotency, undefined, false],
      );
    }
  });
});
