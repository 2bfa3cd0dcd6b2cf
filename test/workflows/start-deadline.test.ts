import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { bundleReelflowWorkflows } from '../integration/workflow-harness';
import type { PipelineSpec } from '../../src/pipeline-spec';
import type { PipelineSummary, PipelineWorkflowInput } from '../../src/workflows/pipeline-types';
import { scriptedService, useScriptedWorker, type Script, type ServiceCall } from './scripted-service';

/**
 * Start deadlines (`startDeadlineSeconds`) on the time-skipping server: a real worker runs the real
 * workflow bundle; only the activities are scripted (they stand for the paid service, which holds a
 * job IN_QUEUE as long as the script says). An hour in the queue takes no wall time.
 */

const TASK_QUEUE = 'start-deadline';
const LONG_FORM = 'service-video-cinema-long-form-from-references';
const INPUT = { image_urls: ['https://media.test/reference.png'] };

const service = scriptedService();
const scripted = useScriptedWorker(TASK_QUEUE, service, async () => ({
  workflowBundle: await bundleReelflowWorkflows(),
}));

type Step = PipelineSpec['steps'][number];
const step = (id: string, more: Partial<Step> = {}): Step => ({ id, model: LONG_FORM, input: INPUT, ...more });

async function start(name: string, steps: Step[], script: Script, extra: Partial<PipelineSpec> = {}) {
  const workflowId = `pipeline/${name}`;
  service.script(workflowId, script);
  const input: PipelineWorkflowInput = { spec: { name, steps, ...extra }, publishSearchAttributes: false };
  return scripted.env.client.workflow.start('pipelineWorkflow', { taskQueue: TASK_QUEUE, workflowId, args: [input] });
}

async function failureOf(handle: WorkflowHandle): Promise<ApplicationFailure> {
  const error = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  const cause = (error as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

const secondsAfter = (from: ServiceCall | undefined, call: ServiceCall | undefined) =>
  Math.floor(((call?.atMs ?? NaN) - (from?.atMs ?? NaN)) / 1000);
const requestIdOf = (call: ServiceCall | undefined) => call?.args[0] as string;
const keyOf = (call: ServiceCall) => (call.args[0] as { idempotencyKey: string }).idempotencyKey;

describe('start deadlines (time-skipping server, scripted service)', () => {
  it('cancels a job still IN_QUEUE at its deadline, refunded in full, and fails the step StartDeadlineExceeded', async () => {
    const handle = await start('queued-too-long', [step('render', { startDeadlineSeconds: 600 })], {
      job: () => ({ queuedSeconds: 3600, runSeconds: 60 }),
    });
    const failure = await failureOf(handle);
    expect(failure.type).toBe('StepFailed');
    expect(failure.message).toMatch(/\[StartDeadlineExceeded\]/);
    expect(failure.message).toMatch(/not started within 600 s of its submit 1 time\(s\)/);
    const id = handle.workflowId;
    const [submit] = service.calls(id, 'submitAndSubscribe');
    const cancels = service.calls(id, 'cancelJob');
    expect(cancels).toHaveLength(1);
    // Cancelled at the deadline (a workflow timer), while the service still held it in its queue.
    expect(secondsAfter(submit, cancels[0])).toBe(600);
    expect(service.cancelledFrom(requestIdOf(cancels[0]))).toBe('IN_QUEUE');
    // Polls: the fallback's own (early check, then paced), and one read at the deadline.
    expect(service.calls(id, 'pollJobStatus').map((poll) => secondsAfter(submit, poll))).toEqual([5, 180, 480, 600]);
    const summary = failure.details?.[0] as PipelineSummary;
    expect(summary.steps[0]).toMatchObject({ status: 'failed', attempts: 1, charged: 80, refunded: 80 });
    expect(summary.ledger.net).toBe(0);
  });

  it('resubmits with a fresh key and a fresh deadline (the pipeline default) when the policy allows it', async () => {
    const handle = await start(
      'queued-then-resubmitted',
      [step('render', { retry: { maxResubmits: 1 } })],
      { job: (n) => (n === 1 ? { queuedSeconds: 3600 } : { queuedSeconds: 500, runSeconds: 30 }) },
      { startDeadlineSeconds: 600 },
    );
    const summary = (await handle.result()) as PipelineSummary;
    const id = handle.workflowId;
    const submits = service.calls(id, 'submitAndSubscribe');
    expect(submits).toHaveLength(2);
    expect(new Set(submits.map(keyOf)).size).toBe(2);
    const cancels = service.calls(id, 'cancelJob');
    // Only the first job was cancelled; the second started 500 s after its own submit, inside its deadline.
    expect(cancels).toHaveLength(1);
    expect(secondsAfter(submits[0], cancels[0])).toBe(600);
    expect(summary.status).toBe('completed');
    expect(summary.steps[0]).toMatchObject({ status: 'completed', attempts: 2 });
    expect(summary.ledger).toEqual({ quoted: 80, charged: 160, refunded: 80, net: 80 });
  });

  it('cancels nothing when the job started before its deadline', async () => {
    const handle = await start('started-in-time', [step('render', { startDeadlineSeconds: 60 })], {
      job: () => ({ queuedSeconds: 30, runSeconds: 300 }),
    });
    const summary = (await handle.result()) as PipelineSummary;
    const id = handle.workflowId;
    const [submit] = service.calls(id, 'submitAndSubscribe');
    expect(service.calls(id, 'cancelJob')).toEqual([]);
    // The read at the deadline found it IN_PROGRESS; the paced polls go on as without a deadline.
    const polls = service.calls(id, 'pollJobStatus').map((poll) => secondsAfter(submit, poll));
    expect(polls.slice(0, 3)).toEqual([5, 60, 180]);
    expect(summary.steps[0]).toMatchObject({ status: 'completed', attempts: 1 });
  });
});
