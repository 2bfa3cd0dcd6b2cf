import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { PIXEL_PNG } from '../helpers/local-service';
import { threeStepPipeline } from '../../src/pipeline';
import type { RunningBridge } from '../../src/bridge/server';
import { startRegisteredBridge } from '../helpers/registered-bridge';
import { SEARCH_ATTRIBUTE_KEYS, jobWorkflowId, pipelineWorkflowId, rendezvousWorkflowId } from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { bundleReelflowWorkflows, silentWavDataUri, startHarness, type Harness } from './workflow-harness';

/**
 * The whole webhook path with no stand-in: the local service signs and POSTs `generation.completed`
 * to a registered endpoint, which is the real bridge over HTTP; the bridge verifies and hands the
 * event to the rendezvous, which forwards it to the job workflow. No status poll is made.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: RunningBridge;
const TASK_QUEUE = 'webhook-path-test';

beforeAll(async () => {
  [bundle, env] = await Promise.all([bundleReelflowWorkflows(), startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS })]);
  h = await startHarness(env, bundle, TASK_QUEUE, { allowPrivateWebhooks: true });
}, 120_000);

afterAll(async () => {
  await bridge?.close();
  await h?.close();
  await env?.teardown();
});

it('completes a three-step pipeline from the service’s own signed webhooks, with zero status polls', async () => {
  ({ bridge } = await startRegisteredBridge({ serviceUrl: h.service.url, temporalAddress: env.address, taskQueue: TASK_QUEUE }));

  const spec = threeStepPipeline({ imageUrls: [PIXEL_PNG], audioUrl: silentWavDataUri(), duration: '4' }, 'webhook-path', {
    allowedOrigins: [h.service.url],
  });
  const handle = await env.client.workflow.start('pipelineWorkflow', {
    taskQueue: TASK_QUEUE,
    workflowId: pipelineWorkflowId(spec.name),
    args: [{ spec, uriRules: { allowedOrigins: [h.service.url] } }],
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
    if (next) expect(next.input?.video_url).toBe(step.output?.videos[0]?.url);
    // No budget: the submit goes first, the quote (for the ledger) runs beside the job, and nothing is fetched.
    const history = await env.client.workflow.getHandle(jobWorkflowId(spec.name, step.id)).fetchHistory();
    const activities = (history.events ?? []).flatMap((e) => {
      const name = e.activityTaskScheduledEventAttributes?.activityType?.name;
      return name ? [name] : [];
    });
    expect(activities).toEqual(['submitJob', 'quoteJob', 'subscribeToWebhook']);
    expect(step.charged).toBe(job?.creditsCharged);
    expect(step.quoted).toBe(job?.creditsCharged);
  }
  // Every completion reached the bridge as a real signed delivery, and each rendezvous forwarded it.
  const deliveries = h.service.service.deliveries();
  for (const job of jobs) {
    expect(deliveries.some((d) => d.requestId === job.id && d.state === 'delivered')).toBe(true);
    const rendezvous = await env.client.workflow.getHandle(rendezvousWorkflowId(job.id)).describe();
    expect(rendezvous.type).toBe('webhookRendezvousWorkflow');
  }
});
