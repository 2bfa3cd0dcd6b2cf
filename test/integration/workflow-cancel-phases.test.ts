import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startDevServer } from '../helpers/temporal';
import { LONG_FORM, PIXEL_PNG, TEST_API_KEY } from '../helpers/local-service';
import { pipeline } from '../../src/pipeline';
import { createActivities, type ReelflowActivities } from '../../src/activities';
import { createServiceClient } from '../../src/client/service-client';
import { createSubscribeActivity } from '../../src/bridge/subscribe-activity';
import { subscribeToRoute } from '../../src/bridge/route-client';
import { SEARCH_ATTRIBUTE_KEYS, pipelineProgressQuery, pipelineWorkflowId } from '../../src/workflows/definitions';
import type { PipelineSummary } from '../../src/workflows/pipeline-types';
import { bundleReelflowWorkflows, eventually, startHarness, startTestBridge, type Harness, type TestBridge } from './workflow-harness';

/**
 * Cancel at every phase of a step (the waiting, queued and completed-too-late phases are in
 * workflow-pipeline.test.ts): while quoting (before any submit), while the submit is in flight (it is
 * never abandoned: the job it created is cancelled and refunded), and while backing off before a
 * resubmit. A gate in front of an activity holds the pipeline in the phase until the cancel was sent.
 */

let bundle: WorkflowBundleWithSourceMap;
let env: TestWorkflowEnvironment;
let h: Harness;
let bridge: TestBridge;
const QUEUE = 'workflow-cancel-phases';
const gates: Partial<Record<'quote' | 'submit', Promise<void>>> = {};

beforeAll(async () => {
  [bundle, env] = await Promise.all([bundleReelflowWorkflows(), startDevServer({ searchAttributes: SEARCH_ATTRIBUTE_KEYS })]);
  // The harness runs the service; this file's worker (with gates) runs on its own queue.
  h = await startHarness(env, bundle, `${QUEUE}-unused`, { concurrencyPerModel: 1 });
  bridge = await startTestBridge(h.service, env, QUEUE);
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
    subscribe: createSubscribeActivity(env.client, QUEUE),
    routes: { subscribe: (requestId, subscriber) => subscribeToRoute({ client: env.client, taskQueue: QUEUE }, requestId, subscriber) },
  });
  const activities: ReelflowActivities = {
    ...real,
    quoteJob: async (...args) => {
      await gates.quote;
      return real.quoteJob(...args);
    },
    submitAndSubscribe: async (request) => {
      await gates.submit;
      return real.submitAndSubscribe(request);
    },
  };
  return Worker.create({ connection: env.nativeConnection, taskQueue: QUEUE, workflowBundle: bundle, activities });
}

/** A gate the test opens once it has sent the cancel. */
function gate(): { promise: Promise<void>; open(): void } {
  let open = () => undefined as void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function cancelled(name: string, whileIn: (summary: PipelineSummary) => boolean, spec = pipeline(name).step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] }).build()) {
  const worker = await gatedWorker();
  return worker.runUntil(async () => {
    const handle = await env.client.workflow.start('pipelineWorkflow', { taskQueue: QUEUE, workflowId: pipelineWorkflowId(spec.name), args: [{ spec, defaultPacing: { firstPollSeconds: 1, factor: 2, capSeconds: 2 } }] });
    await eventually(async () => whileIn(await handle.query(pipelineProgressQuery)), `${name} in the phase`);
    await handle.cancel();
    for (const g of Object.keys(gates) as Array<keyof typeof gates>) delete gates[g];
    opened.forEach((o) => o());
    const error = await handle.result().then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(WorkflowFailedError);
    expect((error as WorkflowFailedError).cause?.name).toBe('CancelledFailure');
    return handle.query(pipelineProgressQuery);
  });
}
const opened: Array<() => void> = [];
function hold(which: 'quote' | 'submit'): void {
  const g = gate();
  gates[which] = g.promise;
  opened.push(g.open);
}

const jobsOf = (name: string) => h.service.service.jobs().filter((j) => j.idempotencyKey?.includes(`${name}/job/`));

it('cancelled while quoting (a step with a budget): nothing is submitted', async () => {
  hold('quote');
  const spec = pipeline('cancel-quoting').step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] }).budget(500).build();
  const summary = await cancelled('cancel-quoting', (s) => s.steps[0]?.phase === 'quoting', spec);
  expect(summary.status).toBe('cancelled');
  expect(summary.steps[0]).toMatchObject({ status: 'cancelled', requestIds: [], attempts: 0 });
  expect(jobsOf('cancel-quoting')).toHaveLength(0);
  expect(summary.ledger.net).toBe(0);
});

it('cancelled while the submit is in flight: the submit completes, its job is cancelled and refunded', async () => {
  hold('submit');
  h.service.service.setFaults({ modelDurationMs: { [LONG_FORM]: 600_000 } });
  try {
    const summary = await cancelled('cancel-submitting', (s) => s.steps[0]?.phase === 'submitting');
    const jobs = jobsOf('cancel-submitting');
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.status).toBe('CANCELLED');
    expect(summary.steps[0]).toMatchObject({ status: 'cancelled', requestIds: [jobs[0]?.id], charged: 80, refunded: 80 });
    expect(summary.ledger).toEqual({ quoted: 80, charged: 80, refunded: 80, net: 0 });
  } finally {
    h.service.service.setFaults({ modelDurationMs: 0 });
  }
});

it('cancelled while backing off before a resubmit: no second job', async () => {
  h.service.service.setFaults({ failureRate: 1 });
  try {
    const spec = pipeline('cancel-backoff').step('generate', LONG_FORM, { image_urls: [PIXEL_PNG] }, { maxResubmits: 3 }).build();
    const summary = await cancelled('cancel-backoff', (s) => s.steps[0]?.phase === 'backing-off', spec);
    const jobs = jobsOf('cancel-backoff');
    expect(jobs.map((j) => j.status)).toEqual(['FAILED']);
    expect(summary.steps[0]).toMatchObject({ status: 'cancelled', attempts: 1 });
    expect(summary.ledger).toEqual({ quoted: 80, charged: 80, refunded: 80, net: 0 });
  } finally {
    h.service.service.setFaults({ failureRate: 0 });
  }
});
