import { WorkflowNotFoundError } from '@temporalio/client';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { PIXEL_PNG } from '../helpers/local-service';
import { threeStepPipeline } from '../../src/pipeline-spec';
import type { RunningBridge } from '../../src/bridge/server';
import { startRegisteredBridge } from '../helpers/registered-bridge';
import { SEARCH_ATTRIBUTE_KEYS, pipelineWorkflowId, routeWorkflowId } from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { bundleReelflowWorkflows, silentWavDataUri, startHarness, type Harness } from './workflow-harness';
import { jobOutput } from '../helpers/step-summary';

/**
 * The whole webhook path with no stand-in: the local service signs and POSTs `generation.completed`
 * to a registered endpoint, which is the real bridge over HTTP; the bridge verifies and hands the
 * event to the pipeline workflow itself (its route names it). No status poll is made.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: RunningBridge;
const TASK_QUEUE = 'webhook-path-test';

beforeAll(async () => {
  [bundle, env] = await Promise.all([
    bundleReelflowWorkflows(),
    startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS }),
  ]);
  h = await startHarness(env, bundle, TASK_QUEUE, { allowPrivateWebhooks: true });
}, 120_000);

afterAll(async () => {
  await bridge?.close();
  await h?.close();
  await env?.teardown();
});

it('completes a three-step pipeline from the service’s own signed webhooks, with zero status polls', async () => {
  ({ bridge } = await startRegisteredBridge({
    serviceUrl: h.service.url,
    temporalAddress: env.address,
    taskQueue: TASK_QUEUE,
  }));

  const spec = threeStepPipeline(
    { imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(), duration: '4' },
    'webhook-path',
    {
      allowedOrigins: [h.service.url],
    },
  );
  const handle = await env.client.workflow.start('pipelineWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: pipelineWorkflowId(spec.name),
    // Zero polls is the claim: no early status check either (it would poll a job still rendering after 5 s).
    args: [{ spec, uriRules: { allowedOrigins: [h.service.url] }, defaultPacing: { earlyCheckSeconds: 0 } }],
  });
  const summary = (await handle.result()) as PipelineSummary;

  expect(summary.status).toBe('completed');
  expect(h.calls.status).toBe(0);
  expect(h.service.service.counters().statusCalls).toBe(0);
  // The signed events carried the results: no step fetched its result from the service.
  expect(h.calls.result).toBe(0);
  expect(h.service.service.counters().resultCalls).toBe(0);
  const jobs = h.service.service.jobs();
  expect(jobs).toHaveLength(3);
  for (const [index, step] of summary.steps.entries()) {
    const job = jobs.find((j) => j.id === step.requestIds[0]);
    expect(job?.status).toBe('COMPLETED');
    expect(step.output).toMatchObject({ request_id: job?.id, status: 'COMPLETED', credits_used: job?.creditsCharged });
    // Each step's input is the previous step's output (fed forward from the event's result).
    const next = summary.steps[index + 1];
    if (next) expect(next.input?.video_url).toBe(jobOutput(step.output)?.videos[0]?.url);
    expect(step.charged).toBe(job?.creditsCharged);
    // No budget and a charge in every result: nothing was quoted.
    expect(step.quoted).toBe(0);
  }
  expect(h.calls.quote).toBe(0);
  // One workflow: no step ran as a child. No budget: one submit (and subscribe) per step, no quote,
  // nothing fetched.
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  expect(events.some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)).toBe(false);
  const activities = events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
  // One submit per step; the preflight of the literal inputs (generate's image, revoice's voice track) ran
  // with the spec's validation as one local activity: one marker, no activity task.
  expect(events.filter((e) => e.markerRecordedEventAttributes)).toHaveLength(1);
  expect(activities).toEqual([
    'reelflow.submitAndSubscribe',
    'reelflow.submitAndSubscribe',
    'reelflow.submitAndSubscribe',
  ]);
  // Every completion reached the bridge as a real signed delivery and was signalled to the pipeline itself
  // by the bridge's forwarder, from the subscription row the submit wrote: no route workflow exists.
  const deliveries = h.service.service.deliveries();
  const signals = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'jobEvent');
  expect(signals).toHaveLength(3);
  for (const job of jobs) {
    expect(deliveries.some((d) => d.requestId === job.id && d.state === 'delivered')).toBe(true);
    await expect(env.client.workflow.getHandle(routeWorkflowId(job.id)).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
  }
});
