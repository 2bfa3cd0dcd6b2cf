import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { request } from 'undici';
import { startAnswerProxy } from '../helpers/answer-proxy';
import { createReelflowWorker } from '../../src/workers/worker';
import { guardedSubmit } from '../../src/activities/submit-guard';
import { startDevServer } from '../helpers/temporal';
import { PIXEL_PNG, LONG_FORM, TEST_API_KEY } from '../helpers/local-service';
import { createServiceClient } from '../../src/client/service-client';
import { from, pipeline, threeStepPipeline } from '../../src/pipeline-spec';
import { Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities';
import { createRouteSubscriber } from '../../src/routing';
import { testRouteStore } from '../helpers/route-store';
import { prefixedActivities } from '../../src/plugin/activity-types';
import {
  jobEventSignal,
  routeWorkflowId,
  SEARCH_ATTRIBUTES,
  SEARCH_ATTRIBUTE_KEYS,
  pipelineProgressQuery,
  pipelineWorkflowId,
} from '../../src/workflows/definitions';
import type { PipelineSummary, PipelineWorkflowInput } from '../../src/workflows/pipeline-types';
import {
  bundleReelflowWorkflows,
  completionEvent,
  eventually,
  maybeRecordHistory,
  silentWavDataUri,
  startHarness,
  startTestBridge,
  type Harness,
  type TestBridge,
} from './workflow-harness';
import { jobOutput } from '../helpers/step-summary';

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: TestBridge;
const TASK_QUEUE = 'workflow-pipeline-test';
/** Short fallback polling so failure paths finish fast; long enough that a delivered webhook always wins. */
const FAST_PACING = { firstPollSeconds: 1, factor: 2, capSeconds: 2 };

beforeAll(async () => {
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  h = await startHarness(env, bundle, TASK_QUEUE, { concurrencyPerModel: 1 });
  bridge = await startTestBridge(h.service, env, TASK_QUEUE);
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await h?.close();
  await env?.teardown();
});

/**
 * Starts a pipeline. These tests are about the webhook path and exact counts of polls, so the early
 * status check is off unless a test sets its pacing (cli-commands.test.ts covers the check).
 */
function start(input: PipelineWorkflowInput) {
  return env.client.workflow.start('pipelineWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: pipelineWorkflowId(input.spec.name),
    args: [{ uriRules: { allowedOrigins: [h.service.url] }, defaultPacing: { earlyCheckSeconds: 0 }, ...input }],
  });
}

/** The worker runs for the whole file; kept as a seam so each test reads the same. */
function run<T>(fn: () => Promise<T>): Promise<T> {
  return fn();
}

const jobsOf = (ids: string[]) => h.service.service.jobs().filter((j) => ids.includes(j.id));

/** The pipeline's jobEvent signals, as event ids in arrival order (its history). */
async function signalledEventIds(workflowId: string): Promise<string[]> {
  const history = await env.client.workflow.getHandle(workflowId).fetchHistory();
  return (history.events ?? []).flatMap((e) => {
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName !== 'jobEvent') return [];
    const payload = signal.input?.payloads?.[0]?.data;
    return payload ? [(JSON.parse(Buffer.from(payload).toString('utf8')) as { event_id: string }).event_id] : [];
  });
}

describe('pipeline workflow on the dev server with the local service', () => {
  it('runs the three-step chain, each input URL the previous output URL, with zero status polls on the webhook path', async () => {
    const spec = threeStepPipeline(
      { imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(), duration: '4' },
      'three-step-ok',
      { allowedOrigins: [h.service.url] },
    );
    const statusBefore = h.service.service.counters().statusCalls;
    const summary = await run(async () => {
      const handle = await start({ spec });
      const result = (await handle.result()) as PipelineSummary;
      await maybeRecordHistory(handle, 'pipeline-three-step');
      return result;
    });
    expect(summary.status).toBe('completed');
    expect(summary.steps.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);
    const [generate, revoice, upscale] = summary.steps;
    expect(revoice?.input?.video_url).toBe(jobOutput(generate?.output)?.videos[0]?.url);
    expect(upscale?.input?.video_url).toBe(jobOutput(revoice?.output)?.videos[0]?.url);
    expect(jobOutput(upscale?.output)?.videos[0]?.url).toMatch(new RegExp(`^${h.service.url}/files/`));
    // Webhook path: every outcome came by event, so not one status poll.
    expect(h.service.service.counters().statusCalls - statusBefore).toBe(0);
    expect(summary.steps.map((s) => s.polls)).toEqual([0, 0, 0]);
    // The ledger matches the service's own books.
    const jobs = jobsOf(summary.steps.flatMap((s) => s.requestIds));
    expect(jobs).toHaveLength(3);
    const charged = jobs.reduce((sum, j) => sum + j.creditsCharged, 0);
    expect(summary.ledger).toEqual({ quoted: 0, charged, refunded: 0, net: charged });
    // The final output is a real video file.
    const file = await request(jobOutput(upscale?.output)?.videos[0]?.url as string);
    expect(file.statusCode).toBe(200);
    expect(String(file.headers['content-type'])).toMatch(/^video\//);
    await file.body.dump();
    // Operator visibility: search attributes.
    const description = await env.client.workflow.getHandle(pipelineWorkflowId(spec.name)).describe();
    expect(description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.status)).toBe('completed');
    expect(description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.creditsSpent)).toBe(charged);
    expect(description.typedSearchAttributes.get(SEARCH_ATTRIBUTES.requestIds)?.sort()).toEqual(
      jobs.map((j) => j.id).sort(),
    );
    // The search attributes say it: no memo summary (that is the fallback of a namespace without them).
    expect(description.memo?.summary).toBeUndefined();
  });

  it('resubmits a step that fails once, with a fresh idempotency key, and records the refund', async () => {
    h.service.service.setFaults({ failureRate: 1 });
    const spec = pipeline('fail-once')
      .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] }, { maxResubmits: 1 })
      .build();
    const summary = await run(async () => {
      const handle = await start({ spec, defaultPacing: FAST_PACING });
      // The fault is decided when a job starts; once the first one has started, let the next succeed.
      await eventually(
        () =>
          h.service.service
            .jobs()
            .some((j) => j.status !== 'IN_QUEUE' && j.idempotencyKey?.includes('fail-once/job/generate')),
        'first attempt started',
      );
      h.service.service.setFaults({ failureRate: 0 });
      const result = (await handle.result()) as PipelineSummary;
      await maybeRecordHistory(handle, 'pipeline-fail-once');
      return result;
    });
    const step = summary.steps[0];
    expect(step?.status).toBe('completed');
    expect(step?.attempts).toBe(2);
    const jobs = jobsOf(step?.requestIds ?? []);
    expect(jobs.map((j) => j.status)).toEqual(['FAILED', 'COMPLETED']);
    expect(new Set(jobs.map((j) => j.idempotencyKey)).size).toBe(2);
    expect(summary.ledger).toEqual({ quoted: 80, charged: 160, refunded: 80, net: 80 });
  });

  it('fails the pipeline with a clear error when a step fails past its policy; the ledger shows the refunds', async () => {
    h.service.service.setFaults({ failureRate: 1 });
    const spec = pipeline('fail-past-policy')
      .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] }, { maxResubmits: 1 })
      .step('upscale', 'service-upscale-video-fast', { video_url: from('generate') })
      .build();
    const submitsBefore = h.service.service.counters().submits;
    try {
      const error = await run(async () => {
        // No fallback poll within the hour: the failures must come as the service's generation.failed events.
        const handle = await start({ spec, defaultPacing: { firstPollSeconds: 3600, earlyCheckSeconds: 0 } });
        const failure = await handle.result().then(
          () => null,
          (e: unknown) => e,
        );
        await maybeRecordHistory(handle, 'pipeline-fail-past-policy');
        return failure;
      });
      expect(error).toBeInstanceOf(WorkflowFailedError);
      const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
      expect(cause.type).toBe('StepFailed');
      expect(cause.message).toMatch(
        /failed at step generate \[JobFailed\].*failed 2 time\(s\); policy allows 1 resubmit/,
      );
      const summary = cause.details?.[0] as PipelineSummary;
      expect(summary.steps.map((s) => s.status)).toEqual(['failed', 'skipped']);
      expect(summary.ledger).toEqual({ quoted: 80, charged: 160, refunded: 160, net: 0 });
      // The service's signed generation.failed events told the pipeline (the bridge is registered for them, as the stack's is); no later step was submitted.
      expect(summary.steps[0]?.attemptLog?.map((a) => a.learnedBy)).toEqual(['webhook', 'webhook']);
      expect(h.service.service.counters().submits - submitsBefore).toBe(2);
    } finally {
      h.service.service.setFaults({ failureRate: 0 });
    }
  });

  it('stops before submitting a step whose quote exceeds the remaining budget', async () => {
    // generate costs 80 (4 s, 480p); the upscale of a 4 s clip is quoted above the 5 credits left.
    const spec = pipeline('over-budget')
      .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
      .step('upscale', 'service-upscale-video-fast', { video_url: from('generate') })
      .budget(85)
      .build();
    const submitsBefore = h.service.service.counters().submits;
    const error = await run(async () => {
      const handle = await start({ spec, uriRules: { allowedOrigins: [h.service.url] } });
      const failure = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      await maybeRecordHistory(handle, 'pipeline-over-budget');
      return failure;
    });
    const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('BudgetExceeded');
    expect(cause.message).toMatch(
      /stopped before step upscale: .*quote of \d+ credits exceeds the remaining budget of 5; nothing was submitted/,
    );
    const summary = cause.details?.[0] as PipelineSummary;
    expect(summary.steps.map((s) => s.status)).toEqual(['completed', 'budget-exceeded']);
    expect(summary.steps[1]?.requestIds).toEqual([]);
    expect(h.service.service.counters().submits - submitsBefore).toBe(1);
    expect(summary.ledger.net).toBe(80);
    // With a budget every step quotes before it submits (the refused one never submits); all in the one workflow.
    const history = await env.client.workflow.getHandle(pipelineWorkflowId('over-budget')).fetchHistory();
    const activities = (history.events ?? []).flatMap(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    );
    // The quote before each submit (a budget); the preflight of the literal inputs ran before, as part
    // of the local activity that validates the spec.
    expect(activities).toEqual(['reelflow.quoteJob', 'reelflow.submitAndSubscribe', 'reelflow.quoteJob']);
    expect((history.events ?? []).some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toBe(false);
  });

  it('checks the budget before every step, against what the earlier steps spent: the third of three 80-credit steps is refused at 239', async () => {
    const spec = pipeline('budget-third-step')
      .step('first', LONG_FORM, { image_urls: [PIXEL_PNG] })
      .step('second', LONG_FORM, { image_urls: [PIXEL_PNG] })
      .step('third', LONG_FORM, { image_urls: [PIXEL_PNG] })
      .budget(239)
      .build();
    const submitsBefore = h.service.service.counters().submits;
    const error = await start({ spec }).then((handle) =>
      handle.result().then(
        () => null,
        (e: unknown) => e,
      ),
    );
    const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause.type).toBe('BudgetExceeded');
    expect(cause.message).toMatch(
      /stopped before step third: .*quote of 80 credits exceeds the remaining budget of 79; nothing was submitted/,
    );
    const summary = cause.details?.[0] as PipelineSummary;
    expect(summary.steps.map((s) => s.status)).toEqual(['completed', 'completed', 'budget-exceeded']);
    // At the service: exactly the two steps that fitted were submitted and charged.
    const jobs = h.service.service.jobs().filter((j) => j.idempotencyKey?.includes('budget-third-step/job/'));
    expect(jobs.map((j) => [j.idempotencyKey?.match(/job\/(\w+):/)?.[1], j.status])).toEqual([
      ['first', 'COMPLETED'],
      ['second', 'COMPLETED'],
    ]);
    expect(h.service.service.counters().submits - submitsBefore).toBe(2);
    expect(summary.ledger).toMatchObject({ charged: 160, refunded: 0, net: 160 });
  });

  it('cancels a running job and a queued job through cancel_url; each reported cancelled and refunded, no later step', async () => {
    // Jobs run one at a time per model here: the first pipeline's job runs (and would run for ten
    // minutes), the second one's waits in the queue behind it.
    h.service.service.setFaults({ modelDurationMs: { [LONG_FORM]: 600_000 } });
    const twoSteps = (name: string) =>
      pipeline(name)
        .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
        .step('upscale', 'service-upscale-video-fast', { video_url: from('generate') })
        .build();
    const submitsBefore = h.service.service.counters().submits;
    try {
      const running = await start({ spec: twoSteps('cancel-running') });
      const runningJob = await eventually(
        () =>
          h.service.service
            .jobs()
            .find((j) => j.idempotencyKey?.includes('cancel-running/job/generate') && j.status === 'IN_PROGRESS'),
        'running job',
      );
      const queued = await start({ spec: twoSteps('cancel-queued') });
      const queuedJob = await eventually(
        () =>
          h.service.service
            .jobs()
            .find((j) => j.idempotencyKey?.includes('cancel-queued/job/generate') && j.status === 'IN_QUEUE'),
        'queued job',
      );
      await queued.cancel();
      await running.cancel();
      for (const [handle, jobId, name] of [
        [queued, queuedJob.id, 'queued'],
        [running, runningJob.id, 'running'],
      ] as const) {
        const error = await handle.result().then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(WorkflowFailedError);
        expect((error as WorkflowFailedError).cause?.name).toBe('CancelledFailure');
        const summary = await handle.query(pipelineProgressQuery);
        await maybeRecordHistory(handle, `pipeline-cancel-${name}`);
        expect(summary.status).toBe('cancelled');
        expect(summary.steps.map((s) => s.status)).toEqual(['cancelled', 'skipped']);
        expect(summary.steps[0]?.requestIds).toEqual([jobId]);
        expect(summary.ledger).toEqual({ quoted: 80, charged: 80, refunded: 80, net: 0 });
        const job = h.service.service.jobs().find((j) => j.id === jobId);
        expect(job?.status).toBe('CANCELLED');
        expect(job?.creditsRefunded).toBe(80);
      }
      expect(h.service.service.counters().submits - submitsBefore).toBe(2);
    } finally {
      h.service.service.setFaults({ modelDurationMs: 0 });
    }
  });

  it('reports a job that completed before the cancel as completed-too-late, with its output, and starts no later step', async () => {
    bridge.setEnabled(false);
    const spec = pipeline('cancel-too-late')
      .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] }, { pacing: { firstPollSeconds: 3600 } })
      .step('upscale', 'service-upscale-video-fast', { video_url: from('generate') })
      .build();
    const submitsBefore = h.service.service.counters().submits;
    try {
      const handle = await start({ spec });
      const job = await eventually(
        () =>
          h.service.service
            .jobs()
            .find((j) => j.idempotencyKey?.includes('cancel-too-late/job/generate') && j.status === 'COMPLETED'),
        'completed job',
      );
      await handle.cancel();
      const error = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      expect((error as WorkflowFailedError).cause?.name).toBe('CancelledFailure');
      const summary = await handle.query(pipelineProgressQuery);
      await maybeRecordHistory(handle, 'pipeline-cancel-too-late');
      expect(summary.steps.map((s) => s.status)).toEqual(['completed-too-late', 'skipped']);
      expect(jobOutput(summary.steps[0]?.output)?.request_id).toBe(job.id);
      expect(jobOutput(summary.steps[0]?.output)?.videos[0]?.url).toMatch(/\/files\//);
      expect(summary.ledger).toEqual({ quoted: 0, charged: 80, refunded: 0, net: 80 });
      expect(h.service.service.counters().submits - submitsBefore).toBe(1);
    } finally {
      bridge.setEnabled(true);
    }
  });

  it('ignores duplicate, late and unknown-request events; deliveries go straight to the pipeline', async () => {
    bridge.setEnabled(false);
    const spec = pipeline('events')
      .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
      .build();
    try {
      const handle = await start({ spec });
      const job = await eventually(
        () =>
          h.service.service
            .jobs()
            .find((j) => j.idempotencyKey?.includes('events/job/generate') && j.status === 'COMPLETED'),
        'completed job',
      );
      const real = await completionEvent(h.sideClient, job.id);
      // While the step waits: an event for a request nobody knows, twice (the second is a duplicate).
      const stranger = { ...real, event_id: 'evt_stranger', request_id: 'req_nobody_knows' };
      await handle.signal(jobEventSignal, stranger);
      await handle.signal(jobEventSignal, stranger);
      // The same unknown request through the bridge path: acknowledged and kept as a row of the route
      // store (until its TTL), never as a workflow.
      expect(await bridge.deliver({ ...stranger, event_id: 'evt_stranger_2' })).toBe(202);
      await expect(env.client.workflow.getHandle(routeWorkflowId('req_nobody_knows')).describe()).rejects.toThrow(
        WorkflowNotFoundError,
      );
      // A query may be answered before the signals' workflow task ran: wait until both were handled.
      const waiting = await eventually(async () => {
        const state = await handle.query(pipelineProgressQuery);
        return (state.events?.received ?? 0) + (state.events?.duplicates ?? 0) >= 2 ? state : undefined;
      }, 'the stranger events handled');
      expect(waiting.steps[0]?.phase).toBe('waiting');
      expect(waiting.events).toEqual({ received: 1, duplicates: 1, ignored: 1 });
      // The real event, delivered twice (same event_id), signed, through the bridge's HTTP endpoint.
      expect(await bridge.deliver(real)).toBe(202);
      expect(await bridge.deliver(real)).toBe(202);
      const summary = (await handle.result()) as PipelineSummary;
      await maybeRecordHistory(handle, 'pipeline-events');
      // A late event after completion (fresh event_id, same request): its pipeline is closed, nothing happens.
      expect(await bridge.deliver({ ...real, event_id: 'evt_late' })).toBe(202);
      expect(summary.status).toBe('completed');
      expect(jobOutput(summary.steps[0]?.output)?.request_id).toBe(job.id);
      // The stranger's second copy was a duplicate for certain; the real event's second copy only when it reached
      // the pipeline before it closed (after that the bridge answers 202 and nothing happens): count from the history.
      const signalled = await signalledEventIds(pipelineWorkflowId('events'));
      expect(summary.events).toEqual({
        received: 2,
        duplicates: signalled.length - new Set(signalled).size,
        ignored: 1,
      });
      expect(summary.events?.duplicates).toBeGreaterThanOrEqual(1);
      expect(summary.steps[0]?.polls).toBe(0);
      expect(summary.steps[0]?.attempts).toBe(1);
      expect(summary.steps[0]?.attemptLog?.[0]).toMatchObject({ learnedBy: 'webhook', resultFrom: 'event' });
      expect(h.service.service.jobs().filter((j) => j.idempotencyKey?.includes('events/job/'))).toHaveLength(1);
      // The subscription is a row of the route store: no route workflow for the real request either.
      await expect(env.client.workflow.getHandle(routeWorkflowId(job.id)).describe()).rejects.toThrow(
        WorkflowNotFoundError,
      );
      // One workflow for the whole pipeline: no child workflow was started.
      const history = await handle.fetchHistory();
      expect((history.events ?? []).some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toBe(false);
    } finally {
      bridge.setEnabled(true);
    }
  });

  it('an ambiguous submit with no operator decision before its deadline fails as AmbiguousSubmission naming the key, without a second job', async () => {
    h.service.service.setFaults({ dropSubmitResponseRate: 1 });
    const spec = pipeline('ambiguous')
      .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
      .build();
    const submitsBefore = h.service.service.counters().submits;
    try {
      // The harness's client has the default setting (unknown): the step waits for a decision, here 3.6 s.
      const handle = await start({ spec, ambiguousDeadlineHours: 0.001 });
      const error = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      const cause = (error as WorkflowFailedError).cause as ApplicationFailure;
      expect(cause.type).toBe('StepFailed');
      expect(cause.message).toMatch(
        /\[AmbiguousSubmission\].*request id is unknown, and no decision within 0.001 h.*Idempotency-Key reelflow:ambiguous\/job\/generate:/,
      );
      const jobs = h.service.service.jobs().filter((j) => j.idempotencyKey?.includes('ambiguous/job/generate'));
      expect(jobs).toHaveLength(1);
      expect(cause.message).toContain(jobs[0]?.idempotencyKey);
      expect(h.service.service.counters().submits - submitsBefore).toBe(1);
    } finally {
      h.service.service.setFaults({ dropSubmitResponseRate: 0 });
    }
  });
});

describe('exactly one job per step', () => {
  it('a submit that reached the service but whose worker never reported it is retried with the same key: one job; its early event is not lost', async () => {
    // A worker whose first submit "dies" after the service accepted the job: the activity attempt
    // fails after the HTTP call, exactly as a worker killed at that moment looks to Temporal.
    const queue = 'workflow-exactly-once';
    // The local service honours Idempotency-Key: the retried attempt resends with the same key.
    const honoured = createServiceClient({ baseUrl: h.service.url, apiKey: TEST_API_KEY, idempotency: 'honoured' });
    const activities = createActivities({
      client: honoured,
      routes: createRouteSubscriber(testRouteStore(TASK_QUEUE)),
    });
    let lost = 0;
    let firstJobId: string | undefined;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue: queue,
      workflowBundle: bundle,
      activities: prefixedActivities({
        ...activities,
        // The first attempt "dies" after its POST, before it subscribed: the job completes and its
        // webhook arrives before any subscription, so the bridge parks it in the route.
        submitAndSubscribe: async (request: Parameters<typeof activities.submitAndSubscribe>[0]) => {
          if (lost++ > 0) return activities.submitAndSubscribe(request);
          // The submit as the activity sends it, then the "crash".
          const job = await guardedSubmit(honoured, request.model, request.input as never, request.idempotencyKey);
          firstJobId = job.request_id;
          // The service's own signed delivery reached the bridge (2xx journalled at the service) before any subscription.
          await eventually(() => bridge.deliveredFor(job.request_id), 'the event delivered before the subscription');
          throw new Error('worker died before reporting the submit');
        },
      }),
    });
    const spec = pipeline('exactly-once')
      .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
      .build();
    const before = h.service.service.counters();
    try {
      const summary = await worker.runUntil(async () => {
        const handle = await env.client.workflow.start('pipelineWorkflow', {
          taskQueue: queue,
          workflowId: pipelineWorkflowId(spec.name),
          args: [{ spec, defaultPacing: { earlyCheckSeconds: 0 } }],
        });
        const result = (await handle.result()) as PipelineSummary;
        await maybeRecordHistory(handle, 'pipeline-exactly-once');
        return result;
      });
      const after = h.service.service.counters();
      // Under `honoured` the answered submit leaves no record (no heartbeat after it): the retry sends the
      // same key again and the service answers with the job it has. One job, one charge.
      expect(after.submits - before.submits).toBe(2);
      expect(after.jobsCreated - before.jobsCreated).toBe(1);
      const jobs = h.service.service.jobs().filter((j) => j.idempotencyKey?.includes('exactly-once/job/generate'));
      expect(jobs).toHaveLength(1);
      expect(summary.steps[0]?.requestIds).toEqual([jobs[0]?.id]);
      expect(firstJobId).toBe(jobs[0]?.id);
      expect(summary.ledger.charged).toBe(80);
      // The early event reached the pipeline through the route store (parked in the inbox, then handed
      // over by the retried subscribe in the same statement that wrote its row): no poll, no route workflow.
      expect(summary.steps[0]?.polls).toBe(0);
      expect(summary.steps[0]?.attemptLog?.[0]?.learnedBy).toBe('webhook');
      await expect(env.client.workflow.getHandle(routeWorkflowId(jobs[0]?.id as string)).describe()).rejects.toThrow(
        WorkflowNotFoundError,
      );
    } finally {
      await honoured.close();
    }
  });
});

describe('the real pipeline fed by the service’s signed deliveries through the real bridge', () => {
  it('duplicate deliveries by the service: each event acted on once, one submit per step, the ledger the service’s', async () => {
    // Every successful delivery is sent once more (same event_id, same signed body). The upscale renders for
    // at least 3 s, so the first step's duplicate reaches the open pipeline while its second step runs.
    h.service.service.setFaults({ duplicateDeliveryRate: 1, modelDurationMs: { 'service-upscale-video-fast': 3_000 } });
    const spec = pipeline('service-duplicates')
      .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
      .step('upscale', 'service-upscale-video-fast', { video_url: from('generate') })
      .build();
    const submitsBefore = h.service.service.counters().submits;
    try {
      const summary = (await (await start({ spec })).result()) as PipelineSummary;
      expect(summary.status).toBe('completed');
      const ids = summary.steps.flatMap((s) => s.requestIds);
      expect(ids).toHaveLength(2);
      // The service really sent the first step's event twice; the bridge's inbox keeps one row per
      // event_id, so the copy was acknowledged and not signalled again.
      await eventually(
        () =>
          h.service.service.injectedFaults().some((f) => f.kind === 'delivery_duplicated' && f.requestId === ids[0]),
        'the first step’s event sent twice',
      );
      const signalled = await signalledEventIds(pipelineWorkflowId(spec.name));
      const firstEvent = h.service.service.deliveries().find((d) => d.requestId === ids[0])?.eventId;
      expect(signalled.filter((id) => id === firstEvent)).toHaveLength(1);
      expect(summary.events?.duplicates).toBe(signalled.length - new Set(signalled).size);
      // Acted on once: one attempt and one job per step, every outcome by webhook, no poll.
      expect(summary.steps.map((s) => [s.attempts, s.polls, s.attemptLog?.[0]?.learnedBy])).toEqual([
        [1, 0, 'webhook'],
        [1, 0, 'webhook'],
      ]);
      expect(h.service.service.counters().submits - submitsBefore).toBe(2);
      const charged = jobsOf(ids).reduce((sum, j) => sum + j.creditsCharged, 0);
      expect(summary.ledger).toEqual({ quoted: 0, charged, refunded: 0, net: charged });
    } finally {
      h.service.service.setFaults({ duplicateDeliveryRate: 0, modelDurationMs: 0 });
    }
  });

  it('reordered deliveries: a later step’s event first, an earlier step’s after it; the pipeline takes each for its own request', async () => {
    // Deliveries held (dropped at the service): the first two steps learn their outcomes by fast polls, the
    // last waits for its webhook only (no early check, first poll after an hour).
    bridge.setEnabled(false);
    const fast = { pacing: FAST_PACING };
    const spec = pipeline('reordered')
      .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] }, fast)
      .step('revoice', 'service-horizon-studio', { video_url: from('generate'), audio_url: silentWavDataUri() }, fast)
      .step(
        'upscale',
        'service-upscale-video-fast',
        { video_url: from('revoice', 'videos[0].url') },
        { pacing: { firstPollSeconds: 3600, earlyCheckSeconds: 0 } },
      )
      .build();
    const submitsBefore = h.service.service.counters().submits;
    try {
      const handle = await start({ spec });
      const key = (step: string) => `reordered/job/${step}:`;
      const jobOf = (step: string) => h.service.service.jobs().find((j) => j.idempotencyKey?.includes(key(step)));
      const last = await eventually(() => {
        const job = jobOf('upscale');
        return job?.status === 'COMPLETED' ? job : undefined;
      }, 'the last step’s job completed');
      const [generate, revoice] = [jobOf('generate'), jobOf('revoice')];
      const waiting = await handle.query(pipelineProgressQuery);
      expect(waiting.steps[2]?.phase).toBe('waiting');
      // Arrival order 2, 3, 1 (completion order 1, 2, 3), each signed and POSTed to the bridge.
      expect(await bridge.deliver(await completionEvent(h.sideClient, revoice!.id, 'evt_reordered_revoice'))).toBe(202);
      expect(await bridge.deliver(await completionEvent(h.sideClient, last.id, 'evt_reordered_upscale'))).toBe(202);
      const summary = (await handle.result()) as PipelineSummary;
      expect(await bridge.deliver(await completionEvent(h.sideClient, generate!.id, 'evt_reordered_generate'))).toBe(
        202,
      );
      expect(summary.status).toBe('completed');
      expect(summary.steps.map((s) => s.requestIds)).toEqual([[generate!.id], [revoice!.id], [last.id]]);
      expect(summary.steps.map((s) => s.attemptLog?.[0]?.learnedBy)).toEqual(['poll', 'poll', 'webhook']);
      // The earlier step's late event (its own request, already settled by a poll) changed nothing: one attempt each, no resubmit.
      expect(summary.events).toEqual({ received: 2, duplicates: 0, ignored: 0 });
      expect(summary.steps.map((s) => [s.status, s.attempts])).toEqual([
        ['completed', 1],
        ['completed', 1],
        ['completed', 1],
      ]);
      expect(jobOutput(summary.steps[2]?.output)?.request_id).toBe(last.id);
      expect(h.service.service.counters().submits - submitsBefore).toBe(3);
      const charged = jobsOf([generate!.id, revoice!.id, last.id]).reduce((sum, j) => sum + j.creditsCharged, 0);
      expect(summary.ledger).toEqual({ quoted: 0, charged, refunded: 0, net: charged });
    } finally {
      bridge.setEnabled(true);
    }
  });
});

describe('answers beside the happy path', () => {
  it('a completed event without a whole result: the step fetches the result from the service, once', async () => {
    bridge.setEnabled(false);
    const spec = pipeline('partial-event')
      .step(
        'generate',
        LONG_FORM,
        { image_urls: [PIXEL_PNG] },
        { pacing: { firstPollSeconds: 3600, earlyCheckSeconds: 0 } },
      )
      .build();
    try {
      const handle = await start({ spec });
      const job = await eventually(
        () =>
          h.service.service
            .jobs()
            .find((j) => j.idempotencyKey?.includes('partial-event/job/generate') && j.status === 'COMPLETED'),
        'completed job',
      );
      const whole = await completionEvent(h.sideClient, job.id, 'evt_partial');
      // Says COMPLETED, but carries no videos: not a whole result.
      const partial = {
        ...whole,
        data: {
          request_id: job.id,
          gateway_request_id: job.id,
          status: 'COMPLETED' as const,
          model: LONG_FORM,
          credits_used: job.creditsCharged,
        },
      };
      const fetchesBefore = h.calls.result;
      expect(await bridge.deliver(partial)).toBe(202);
      const summary = (await handle.result()) as PipelineSummary;
      const step = summary.steps[0]!;
      expect(summary.status).toBe('completed');
      expect(step.attemptLog?.[0]).toMatchObject({ learnedBy: 'webhook', resultFrom: 'fetch' });
      expect(h.calls.result - fetchesBefore).toBe(1);
      expect(step.polls).toBe(0);
      expect(step.output).toEqual(await h.sideClient.result(job.id));
      expect(jobOutput(step.output)?.videos[0]?.url).toMatch(/\/files\//);
      expect(summary.ledger).toEqual({
        quoted: 0,
        charged: job.creditsCharged,
        refunded: 0,
        net: job.creditsCharged,
      });
      expect(h.service.service.jobs().filter((j) => j.idempotencyKey?.includes('partial-event/job/'))).toHaveLength(1);
    } finally {
      bridge.setEnabled(true);
    }
  });

  it('quotes only where it buys something: none without a budget; with one, each per-second step quotes before its submit', async () => {
    const queue = 'workflow-quote-count';
    // Every call the worker makes, in order, as the service receives it.
    const proxy = await startAnswerProxy(h.service.url);
    const client = createServiceClient({ baseUrl: proxy.url, apiKey: TEST_API_KEY, idempotency: 'honoured' });
    const worker = await createReelflowWorker({
      connection: env.nativeConnection,
      client: env.client,
      taskQueue: queue,
      service: client,
      workflowBundle: bundle,
      preflight: { trustedOrigins: [h.service.url, proxy.url] },
    });
    const runOne = async (name: string, budget?: number) => {
      const spec = threeStepPipeline({ imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(), duration: '4' }, name, {
        allowedOrigins: [h.service.url, proxy.url],
      });
      proxy.seen.length = 0;
      const handle = await env.client.workflow.start('pipelineWorkflow', {
        taskQueue: queue,
        workflowId: pipelineWorkflowId(name),
        args: [
          {
            spec: budget === undefined ? spec : { ...spec, budgetCredits: budget },
            uriRules: { allowedOrigins: [h.service.url, proxy.url] },
            defaultPacing: FAST_PACING,
          },
        ],
      });
      const summary = (await handle.result()) as PipelineSummary;
      const calls = proxy.seen.filter((line) => /^POST \/v1\/(queue|pricing)/.test(line));
      const jobs = jobsOf(summary.steps.flatMap((s) => s.requestIds));
      return { summary, calls, charged: jobs.reduce((sum, j) => sum + j.creditsCharged, 0) };
    };
    try {
      await worker.runUntil(async () => {
        const free = await runOne('quote-count-free');
        expect(free.summary.status).toBe('completed');
        // No budget and every result says its charge: not one quote, and the ledger is the service's books.
        expect(free.calls.filter((line) => line.startsWith('POST /v1/pricing/quote'))).toEqual([]);
        expect(free.calls).toHaveLength(3);
        expect(free.summary.ledger).toEqual({ quoted: 0, charged: free.charged, refunded: 0, net: free.charged });

        const budgeted = await runOne('quote-count-budget', 10_000);
        expect(budgeted.summary.status).toBe('completed');
        // The long-form step is priced from the contract's table (no call); revoice and upscale quote, each before its submit.
        expect(budgeted.calls.map((line) => line.split(' ')[1])).toEqual([
          '/v1/queue/service-video-cinema-long-form-from-references',
          '/v1/pricing/quote',
          '/v1/queue/service-horizon-studio',
          '/v1/pricing/quote',
          '/v1/queue/service-upscale-video-fast',
        ]);
        expect(budgeted.summary.ledger).toEqual({
          quoted: budgeted.charged,
          charged: budgeted.charged,
          refunded: 0,
          net: budgeted.charged,
        });
      });
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});
