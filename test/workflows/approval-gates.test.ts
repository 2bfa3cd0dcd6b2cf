import { WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { bundleReelflowWorkflows, eventually } from '../integration/workflow-harness';
import type { PipelineSpec } from '../../src/pipeline-spec';
import type { ApprovalOutput } from '../../src/workflows/approval-types';
import type {
  ApprovalStepFields,
  PipelineSummary,
  PipelineWorkflowInput,
  StepSummary,
} from '../../src/workflows/pipeline-types';
import { scriptedService, useScriptedWorker, type Script } from './scripted-service';

/**
 * Approval gates (`"op": "approval"`) on the time-skipping server: the real workflow bundle and a real
 * worker; only the paid service is scripted. A gate's hours pass in a second; a decision is the
 * `decideApproval` update, sent by its public name as `reelflow approve|reject` and the UI send it.
 */

const TASK_QUEUE = 'approval-gates';
const LONG_FORM = 'service-video-cinema-long-form-from-references';
const UPSCALE = 'service-upscale-video-fast';
const HOUR_MS = 3_600_000;

const service = scriptedService();
const scripted = useScriptedWorker(TASK_QUEUE, service, async () => ({
  workflowBundle: await bundleReelflowWorkflows(),
}));

type Step = PipelineSpec['steps'][number];
type GateRow = StepSummary & ApprovalStepFields;

const render: Step = { id: 'render', model: LONG_FORM, input: { image_urls: ['https://media.test/reference.png'] } };
const gate = (more: Partial<Extract<Step, { op: 'approval' }>> = {}): Step => ({
  id: 'review',
  op: 'approval',
  input: { preview: { $from: 'render' }, note: 'is the cut right?' },
  timeoutHours: 72,
  onTimeout: 'reject',
  ...more,
});
/** The step after the gate reads the preview the gate passed on. */
const upscale: Step = { id: 'upscale', model: UPSCALE, input: { video_url: { $from: 'review', path: 'preview' } } };

async function start(name: string, steps: Step[], script: Script = {}): Promise<WorkflowHandle> {
  const workflowId = `pipeline/${name}`;
  service.script(workflowId, script);
  const input: PipelineWorkflowInput = { spec: { name, steps }, publishSearchAttributes: false };
  return scripted.env.client.workflow.start('pipelineWorkflow', { taskQueue: TASK_QUEUE, workflowId, args: [input] });
}

/** The gate's row once it waits for a person. */
async function waiting(handle: WorkflowHandle, id = 'review'): Promise<GateRow> {
  return eventually(async () => {
    // Workflow time moves only while the test waits: skip past the render's early status check.
    await scripted.env.sleep('1 second');
    const summary = await handle.query<PipelineSummary>('pipelineProgress');
    const row = summary.steps.find((s) => s.id === id) as GateRow | undefined;
    return row?.status === 'running' && row.phase === 'person' ? row : undefined;
  }, `gate ${id} waiting for a person`);
}

/** The ApplicationFailure a pipeline ended with. */
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

const decide = (handle: WorkflowHandle, args: Record<string, unknown>) =>
  handle.executeUpdate<{ ok: true; message: string }, [Record<string, unknown>]>('decideApproval', { args: [args] });

describe('approval gates (time-skipping server, scripted service)', () => {
  it('waits for a person; approved, the step after the gate runs on the preview the gate passed on', async () => {
    const handle = await start('gate-approve', [render, gate(), upscale]);
    const row = await waiting(handle);
    const preview = 'https://service.test/files/pipeline-gate-approve-1.mp4';
    expect(row.approval).toMatchObject({ preview, note: 'is the cut right?', timeoutHours: 72, onTimeout: 'reject' });
    expect(row.approval.deadlineAt).toBe((row.startedAt as number) + 72 * HOUR_MS);
    // Nothing after the gate was submitted while it waits.
    expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toHaveLength(1);

    const answer = await decide(handle, { step: 'review', decision: 'approve', by: 'ann' });
    expect(answer.message).toMatch(/review approved/);
    const summary = (await handle.result()) as PipelineSummary;
    expect(summary.status).toBe('completed');
    const submits = service.calls(handle.workflowId, 'submitAndSubscribe');
    expect(submits).toHaveLength(2);
    expect((submits[1]?.args[0] as { input: unknown }).input).toEqual({ video_url: preview });
    const output = summary.outputs.review as ApprovalOutput;
    expect(output).toEqual({ preview, approval: { decision: 'approve', by: 'ann', at: expect.any(Number) } });
    const decided = summary.steps[1] as GateRow;
    expect(decided).toMatchObject({ status: 'completed', charged: 0, requestIds: [] });
    expect(decided.approval.decision).toEqual(output.approval);
  });

  it('rejected: the pipeline ends rejected with the reason, and nothing after the gate is submitted', async () => {
    const handle = await start('gate-reject', [render, gate(), upscale]);
    await waiting(handle);
    await decide(handle, { step: 'review', decision: 'reject', reason: 'wrong logo', by: 'ann' });
    const failure = await failureOf(handle);
    expect(failure.type).toBe('ApprovalRejected');
    expect(failure.message).toBe(
      'pipeline gate-reject was rejected at step review: step review was rejected by ann: wrong logo',
    );
    const summary = failure.details?.[0] as PipelineSummary;
    expect(summary.status).toBe('rejected');
    expect(summary.steps.map((s) => s.status)).toEqual(['completed', 'rejected', 'skipped']);
    expect((summary.steps[1] as GateRow).approval.decision).toMatchObject({ decision: 'reject', reason: 'wrong logo' });
    expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toHaveLength(1);
  });

  it('decides by onTimeout after timeoutHours with no decision: reject ends the pipeline rejected', async () => {
    const handle = await start('gate-timeout-reject', [render, gate({ timeoutHours: 2 }), upscale]);
    const failure = await failureOf(handle);
    expect(failure.type).toBe('ApprovalRejected');
    expect(failure.message).toMatch(/rejected by its timeout \(2 h\)/);
    const summary = failure.details?.[0] as PipelineSummary;
    const row = summary.steps[1] as GateRow;
    expect(row.approval.decision).toMatchObject({ decision: 'reject', timedOut: true });
    // Workflow time: the decision came when the gate's two hours were over, not before.
    expect((row.approval.decision?.at as number) - (row.startedAt as number)).toBeGreaterThanOrEqual(2 * HOUR_MS);
    expect((row.approval.decision?.at as number) - (row.startedAt as number)).toBeLessThan(3 * HOUR_MS);
    expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toHaveLength(1);
  });

  it('decides by onTimeout after timeoutHours with no decision: approve runs the step after the gate', async () => {
    const handle = await start('gate-timeout-approve', [
      render,
      gate({ timeoutHours: 0.5, onTimeout: 'approve' }),
      upscale,
    ]);
    const summary = (await handle.result()) as PipelineSummary;
    expect(summary.status).toBe('completed');
    expect((summary.outputs.review as ApprovalOutput).approval).toMatchObject({ decision: 'approve', timedOut: true });
    expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toHaveLength(2);
  });

  it('an operator may cancel a waiting gate: the pipeline stops with StepCancelled naming the reason', async () => {
    const handle = await start('gate-cancel', [render, gate(), upscale]);
    await waiting(handle);
    await handle.executeUpdate('cancelStep', { args: [{ step: 'review', reason: 'brief changed' }] });
    const failure = await failureOf(handle);
    expect(failure.type).toBe('StepCancelled');
    expect(failure.message).toMatch(/step review was cancelled by an operator \(brief changed\)/);
    expect(service.calls(handle.workflowId, 'submitAndSubscribe')).toHaveLength(1);
  });

  it('a resumed run carries an approved gate as decided: nothing waits, only the step after it is paid', async () => {
    const workflowId = 'pipeline/gate-resume';
    service.script(workflowId, {});
    const preview = 'https://service.test/files/earlier.mp4';
    const approval = { decision: 'approve' as const, by: 'ann', at: 0 };
    const carried = (output: PipelineSummary['outputs'][string]) => ({
      output,
      requestIds: [],
      charged: 0,
      refunded: 0,
      paidInRunId: 'earlier-run',
    });
    const input: PipelineWorkflowInput = {
      spec: { name: 'gate-resume', steps: [render, gate(), upscale] },
      publishSearchAttributes: false,
      resume: {
        workflowId,
        runId: 'earlier-run',
        ledger: { quoted: 0, charged: 80, refunded: 0, net: 80 },
        steps: {
          render: carried({
            request_id: 'earlier',
            status: 'COMPLETED',
            model: LONG_FORM,
            credits_used: 80,
            videos: [{ url: preview, file_name: 'out.mp4', content_type: 'video/mp4' }],
          }),
          review: carried({ preview, approval }),
        },
      },
    };
    const handle = await scripted.env.client.workflow.start('pipelineWorkflow', {
      taskQueue: TASK_QUEUE,
      workflowId,
      args: [input],
    });
    const summary = (await handle.result()) as PipelineSummary;
    expect(summary.status).toBe('completed');
    expect(summary.steps[1]).toMatchObject({ status: 'completed', carriedFrom: 'earlier-run' });
    const submits = service.calls(workflowId, 'submitAndSubscribe');
    expect(submits.map((call) => (call.args[0] as { input: unknown }).input)).toEqual([{ video_url: preview }]);
  });

  it('refuses a decision for a step that is no waiting gate, a bad decision, and a gate decided already', async () => {
    const handle = await start('gate-refusals', [render, gate(), gate({ id: 'second', input: {} })]);
    await waiting(handle);
    const refusal = (args: Record<string, unknown>) =>
      decide(handle, args).then(
        () => undefined,
        (e: unknown) => {
          expect(e).toBeInstanceOf(WorkflowUpdateFailedError);
          return ((e as WorkflowUpdateFailedError).cause as Error).message;
        },
      );
    expect(await refusal({ step: 'nope', decision: 'approve' })).toBe(
      'step: nope is not an approval gate waiting for a decision (waiting: review)',
    );
    expect(await refusal({ step: 'render', decision: 'approve' })).toMatch(
      /^step: render is not an approval gate waiting/,
    );
    // Not waiting yet: the second gate has not started.
    expect(await refusal({ step: 'second', decision: 'approve' })).toMatch(
      /^step: second is not an approval gate waiting/,
    );
    expect(await refusal({ step: 'review', decision: 'maybe' })).toBe(
      'decision: must be "approve" or "reject" (got "maybe")',
    );
    await decide(handle, { step: 'review', decision: 'approve' });
    await waiting(handle, 'second');
    expect(await refusal({ step: 'review', decision: 'reject' })).toBe(
      'step: review was already approved; a gate is decided once',
    );
    await decide(handle, { step: 'second', decision: 'approve', by: 'bob' });
    expect(((await handle.result()) as PipelineSummary).status).toBe('completed');
    // A refused update leaves no trace in history: only the two decisions were accepted.
    const history = await handle.fetchHistory();
    const accepted = history.events?.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes) ?? [];
    expect(accepted).toHaveLength(2);
  });
});
