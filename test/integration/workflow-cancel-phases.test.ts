import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG, TEST_API_KEY } from '../helpers/local-service';
import { from, pipeline } from '../../src/pipeline-spec';
import { createActivities, type ReelflowActivities } from '../../src/activities';
import { prefixedActivities } from '../../src/plugin/activity-types';
import { createServiceClient } from '../../src/client/service-client';
import { createRouteSubscriber } from '../../src/routing';
import { testRouteStore } from '../helpers/route-store';
import {
  SEARCH_ATTRIBUTE_KEYS,
  batchProgressQuery,
  pipelineProgressQuery,
  pipelineWorkflowId,
} from '../../src/workflows/definitions';
import { jsonOf, runCli } from './cli-process';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { EVENT_TYPES } from '../../src/contract';
import {
  bundleReelflowWorkflows,
  eventually,
  maybeRecordHistory,
  startHarness,
  startTestBatch,
  testBatchResults,
  startTestBridge,
  type Harness,
  type TestBridge,
} from './workflow-harness';

/**
 * Cancel at every phase (the queued and completed-too-late phases are also in
 * workflow-pipeline.test.ts): before the submit (preflight), while quoting, while the submit is in
 * flight (it is never abandoned: the job it created is cancelled and refunded), while waiting,
 * between steps, while backing off before a resubmit, during the wind-down polls of an asynchronous
 * cancel, after a terminate (`reelflow cancel` cancels what the terminated pipeline left open), and a
 * batch. A gate in front of an activity holds the pipeline in the phase until the cancel was sent.
 * Each test checks the service's own books: the job CANCELLED (or never created) and its refund in
 * the service's credit ledger, and the pipeline's ledger against them.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: TestBridge;
const QUEUE = 'workflow-cancel-phases';
const gates: Partial<Record<'quote' | 'submit' | 'preflight' | 'archive', Promise<void>>> = {};

beforeAll(async () => {
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  // The harness runs the service; this file's worker (with gates) runs on its own queue.
  h = await startHarness(env, bundle, `${QUEUE}-unused`, { concurrencyPerModel: 1 });
  // Completions only: these tests learn a cancel's end from the cancel answer or a wind-down poll, as with a service that sends no cancel events.
  bridge = await startTestBridge(h.service, env, QUEUE, { events: [EVENT_TYPES.completed] });
}, 120_000);

afterAll(async () => {
  await bridge?.stop();
  await h?.close();
  await env?.teardown();
});

async function gatedWorker(): Promise<Worker> {
  const honoured = createServiceClient({ baseUrl: h.service.url, apiKey: TEST_API_KEY, idempotency: 'honoured' });
  const real = createActivities({
    client: honoured,
    media: h.media,
    routes: createRouteSubscriber(testRouteStore(QUEUE)),
  });
  /** The real activity, run once the test has opened its gate (if one is set). */
  const gated =
    <A extends unknown[], R>(which: keyof typeof gates, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      await gates[which];
      return fn(...args);
    };
  const activities: ReelflowActivities = {
    ...real,
    quoteJob: gated('quote', real.quoteJob),
    submitAndSubscribe: gated('submit', real.submitAndSubscribe),
    // The preflight runs inside the local activity that checks the pipeline before anything is paid.
    checkPipeline: gated('preflight', real.checkPipeline),
    archiveOutputs: gated('archive', real.archiveOutputs),
  };
  return Worker.create({
    connection: env.nativeConnection,
    taskQueue: QUEUE,
    workflowBundle: bundle,
    activities: prefixedActivities(activities),
  });
}

/** A gate the test opens once it has sent the cancel. */
function gate(): { promise: Promise<void>; open(): void } {
  let open = () => undefined as void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function cancelled(
  name: string,
  whileIn: (summary: PipelineSummary) => boolean,
  spec = pipeline(name)
    .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
    .build(),
) {
  const worker = await gatedWorker();
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start('pipelineWorkflow', {
      taskQueue: QUEUE,
      workflowId: pipelineWorkflowId(spec.name),
      args: [{ spec, defaultPacing: { firstPollSeconds: 1, factor: 2, capSeconds: 2 } }],
    });
    await eventually(async () => whileIn(await handle.query(pipelineProgressQuery)), `${name} in the phase`);
    await handle.cancel();
    for (const g of Object.keys(gates) as Array<keyof typeof gates>) delete gates[g];
    opened.forEach((o) => o());
    const error = await handle.result().then(
      () => null,
      (e: unknown) => e,
    );
    await maybeRecordHistory(handle, `pipeline-${name}`);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect((error as WorkflowFailedError).cause?.name).toBe('CancelledFailure');
    return handle.query(pipelineProgressQuery);
  });
}
const opened: Array<() => void> = [];
function hold(which: keyof typeof gates): void {
  const g = gate();
  gates[which] = g.promise;
  opened.push(g.open);
}

const jobsOf = (name: string) => h.service.service.jobs().filter((j) => j.idempotencyKey?.includes(`${name}/job/`));

/**
 * The service's books for a pipeline's jobs: each in `status`, and each charge matched by a refund of
 * the same amount in the service's credit ledger (not only the job's own counters).
 */
function expectRefundedAtService(name: string, count: number, status: 'CANCELLED' | 'FAILED' = 'CANCELLED') {
  const jobs = jobsOf(name);
  expect(jobs.map((j) => j.status)).toEqual(Array(count).fill(status));
  const ledger = h.service.service.ledger();
  for (const job of jobs) {
    const entries = ledger.filter((e) => e.requestId === job.id).map((e) => [e.kind, e.amount]);
    expect(entries).toEqual([
      ['charge', -job.creditsCharged],
      ['refund', job.creditsCharged],
    ]);
    expect(job.creditsRefunded).toBe(job.creditsCharged);
  }
  return jobs;
}

/** Nothing reached the service: no job under the pipeline's keys, so nothing charged for it. */
function expectNothingAtService(name: string) {
  expect(jobsOf(name)).toEqual([]);
}

const LONG_RENDER = { modelDurationMs: { [LONG_FORM]: 600_000 } };

it('cancelled while quoting (a step with a budget): nothing is submitted', async () => {
  hold('quote');
  const spec = pipeline('cancel-quoting')
    .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
    .budget(500)
    .build();
  const summary = await cancelled('cancel-quoting', (s) => s.steps[0]?.phase === 'quoting', spec);
  expect(summary.status).toBe('cancelled');
  expect(summary.steps[0]).toMatchObject({ status: 'cancelled', requestIds: [], attempts: 0 });
  expectNothingAtService('cancel-quoting');
  // The quote answered (a quote is not a spend); nothing was charged.
  expect(summary.ledger).toMatchObject({ charged: 0, refunded: 0, net: 0 });
});

it('cancelled while the submit is in flight: the submit completes, its job is cancelled and refunded', async () => {
  hold('submit');
  h.service.service.setFaults({ modelDurationMs: { [LONG_FORM]: 600_000 } });
  try {
    const summary = await cancelled('cancel-submitting', (s) => s.steps[0]?.phase === 'submitting');
    const jobs = expectRefundedAtService('cancel-submitting', 1);
    expect(summary.steps[0]).toMatchObject({
      status: 'cancelled',
      requestIds: [jobs[0]?.id],
      charged: 80,
      refunded: 80,
    });
    expect(summary.ledger).toEqual({ quoted: 80, charged: 80, refunded: 80, net: 0 });
  } finally {
    h.service.service.setFaults({ modelDurationMs: 0 });
  }
});

it('cancelled while backing off before a resubmit: no second job', async () => {
  h.service.service.setFaults({ failureRate: 1 });
  try {
    const spec = pipeline('cancel-backoff')
      .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] }, { maxResubmits: 3 })
      .build();
    const summary = await cancelled('cancel-backoff', (s) => s.steps[0]?.phase === 'backing-off', spec);
    // The one job failed (refunded by the service), the resubmit never happened.
    expectRefundedAtService('cancel-backoff', 1, 'FAILED');
    expect(summary.steps[0]).toMatchObject({ status: 'cancelled', attempts: 1 });
    expect(summary.ledger).toEqual({ quoted: 80, charged: 80, refunded: 80, net: 0 });
  } finally {
    h.service.service.setFaults({ failureRate: 0 });
  }
});

it('cancelled while its inputs are checked: nothing stays paid', async () => {
  // The checks are a local activity in the pipeline's first workflow task, which also decides the first
  // submit: a cancel that comes meanwhile is seen when that task ends (or when the task is extended
  // while the check runs long), so the first job may have been sent; it is then cancelled and refunded.
  hold('preflight');
  const summary = await cancelled('cancel-preflight', (s) => s.steps[0]?.phase === 'preflight');
  expect(summary.status).toBe('cancelled');
  const jobs = jobsOf('cancel-preflight');
  expect(jobs.length).toBeLessThanOrEqual(1);
  expectRefundedAtService('cancel-preflight', jobs.length);
  expect(summary.steps[0]).toMatchObject({ requestIds: jobs.map((j) => j.id), attempts: jobs.length });
  expect(summary.ledger.net).toBe(0);
});

it('cancelled while waiting for a running job: the job is cancelled at the service and refunded', async () => {
  h.service.service.setFaults(LONG_RENDER);
  try {
    const summary = await cancelled(
      'cancel-waiting',
      (s) => s.steps[0]?.phase === 'waiting' && jobsOf('cancel-waiting')[0]?.status === 'IN_PROGRESS',
    );
    const [job] = expectRefundedAtService('cancel-waiting', 1);
    expect(summary.steps[0]).toMatchObject({ status: 'cancelled', requestIds: [job?.id], charged: 80, refunded: 80 });
    expect(summary.ledger).toEqual({ quoted: 80, charged: 80, refunded: 80, net: 0 });
  } finally {
    h.service.service.setFaults({ modelDurationMs: 0 });
  }
});

it('cancelled after the hand-off: the first step stays paid, the second is cancelled at the service and refunded', async () => {
  // No window is left between two steps: the task that learns the first step's end decides the second's
  // submit (without waiting for the first output's copy, held here until the cancel, which cancels it too).
  hold('archive');
  h.service.service.setFaults({ modelDurationMs: { 'service-upscale-video-fast': 600_000 } });
  try {
    const spec = {
      ...pipeline('cancel-between')
        .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
        .step('again', 'service-upscale-video-fast', { video_url: from('generate') })
        .build(),
      archive: 'always' as const,
    };
    const summary = await cancelled(
      'cancel-between',
      (s) => s.steps[0]?.status === 'completed' && s.steps[1]?.phase === 'waiting',
      spec,
    );
    expect(summary.steps.map((s) => s.status)).toEqual(['completed', 'cancelled']);
    const jobs = jobsOf('cancel-between');
    const again = jobs.find((j) => j.idempotencyKey?.includes('/job/again:'));
    expect(jobs.map((j) => [j.idempotencyKey?.includes('/job/generate:'), j.status, j.creditsRefunded])).toEqual([
      [true, 'COMPLETED', 0],
      [false, 'CANCELLED', again?.creditsCharged],
    ]);
    expect(summary.ledger.net).toBe(80);
  } finally {
    h.service.service.setFaults({ modelDurationMs: 0 });
  }
});

it('cancelled while the service winds the job down (an asynchronous cancel): polled until CANCELLED, then refunded', async () => {
  h.service.service.setFaults({ ...LONG_RENDER, cancelDelayMs: 2_500 });
  try {
    const summary = await cancelled(
      'cancel-winddown',
      (s) => s.steps[0]?.phase === 'waiting' && jobsOf('cancel-winddown')[0]?.status === 'IN_PROGRESS',
    );
    const [job] = expectRefundedAtService('cancel-winddown', 1);
    // The cancel was answered with the live state: the service journalled the delayed cancel.
    expect(
      h.service.service
        .injectedFaults()
        .filter((f) => f.requestId === job?.id)
        .map((f) => f.kind),
    ).toEqual(['cancel_delayed']);
    const attempt = summary.steps[0]?.attemptLog?.[0];
    // Learned by a wind-down poll (no cancel event is sent), and the pipeline closed only after the service's cancel took effect.
    expect(attempt).toMatchObject({ outcome: 'CANCELLED', learnedBy: 'poll', charged: 80, refunded: 80 });
    const closed = (await env.client.workflow.getHandle(pipelineWorkflowId('cancel-winddown')).describe()).closeTime;
    expect(closed?.getTime()).toBeGreaterThanOrEqual(jobsOf('cancel-winddown')[0]?.completedAt ?? Infinity);
    expect(summary.ledger).toEqual({ quoted: 80, charged: 80, refunded: 80, net: 0 });
  } finally {
    h.service.service.setFaults({ modelDurationMs: 0, cancelDelayMs: 0 });
  }
});

it('terminated: the job keeps running (terminate runs no cleanup) until `reelflow cancel` cancels it at the service', async () => {
  h.service.service.setFaults(LONG_RENDER);
  const worker = await gatedWorker();
  try {
    await worker.runUntil(async () => {
      const spec = pipeline('cancel-terminated')
        .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
        .build();
      const handle = await env.client.workflow.start('pipelineWorkflow', {
        taskQueue: QUEUE,
        workflowId: pipelineWorkflowId(spec.name),
        args: [{ spec }],
      });
      const job = await eventually(
        () => jobsOf('cancel-terminated').find((j) => j.status === 'IN_PROGRESS'),
        'running job',
      );
      await eventually(
        async () => (await handle.query(pipelineProgressQuery)).steps[0]?.phase === 'waiting',
        'pipeline waiting',
      );
      await handle.terminate('test: terminate');
      // What terminate alone does: nothing at the service.
      expect(jobsOf('cancel-terminated').map((j) => j.status)).toEqual(['IN_PROGRESS']);
      const cli = await runCli(['cancel', spec.name, '--json'], {
        TEMPORAL_ADDRESS: env.address,
        REELFLOW_TASK_QUEUE: QUEUE,
        REELFLOW_SERVICE_URL: h.service.url,
        REELFLOW_API_KEY: TEST_API_KEY,
      });
      expect(cli.code).toBe(0);
      const report = jsonOf(cli);
      expect(report.temporalStatus).toBe('TERMINATED');
      expect(report.cancelledAtService).toEqual([{ step: 'generate', requestId: job.id, status: 'CANCELLED' }]);
      expectRefundedAtService('cancel-terminated', 1);
      await maybeRecordHistory(handle, 'pipeline-terminated');
    });
  } finally {
    h.service.service.setFaults({ modelDurationMs: 0 });
  }
});

it("cancelling a batch cancels every child pipeline's job at the service (refunded) and creates no other", async () => {
  h.service.service.setFaults(LONG_RENDER);
  const worker = await gatedWorker();
  try {
    await worker.runUntil(async () => {
      const items = ['bc-1', 'bc-2', 'bc-3'].map((name) =>
        pipeline(name)
          .step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] })
          .build(),
      );
      const handle = await startTestBatch(env.client, QUEUE, h.media.store, {
        name: 'cancel-batch-all',
        specs: items,
        concurrency: 2,
      });
      // Two children in flight: one job rendering, the other queued behind it (one render per model).
      await eventually(() => jobsOf('bc-1').length + jobsOf('bc-2').length === 2, 'both children submitted');
      await handle.cancel();
      const error = await handle.result().then(
        () => null,
        (e: unknown) => e,
      );
      expect((error as WorkflowFailedError).cause?.name).toBe('CancelledFailure');
      const progress = await handle.query(batchProgressQuery);
      await maybeRecordHistory(handle, 'batch-cancel-all');
      // Results are in the order the children ended; the item never started is only counted.
      const results = await testBatchResults(progress, h.media.store);
      expect(results.map((r) => [r.name, r.status]).sort()).toEqual([
        ['bc-1', 'cancelled'],
        ['bc-2', 'cancelled'],
      ]);
      expect(progress).toMatchObject({ cancelled: 2, skipped: 1 });
      // Each cancelled item's refund reached the batch's credits.
      expect(progress.credits).toEqual({ charged: 160, refunded: 160, net: 0 });
      expectRefundedAtService('bc-1', 1);
      expectRefundedAtService('bc-2', 1);
      expectNothingAtService('bc-3');
      // Each child pipeline's own ledger (the batch's results carry none for a cancelled item).
      for (const r of results.filter((r) => r.status === 'cancelled')) {
        expect((await env.client.workflow.getHandle(r.workflowId).query(pipelineProgressQuery)).ledger).toEqual({
          quoted: 80,
          charged: 80,
          refunded: 80,
          net: 0,
        });
      }
    });
  } finally {
    h.service.service.setFaults({ modelDurationMs: 0 });
  }
});
