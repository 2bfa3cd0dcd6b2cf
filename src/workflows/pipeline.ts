import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../contract/failure-types';
import { validateResolution, type RecoveryState } from './recovery';
import { RECOVERY_MEMO_KEY, type AmbiguousSubmit } from './recovery-types';
import { MODELS } from '../contract/model-metadata';
import { resolvePacing } from '../spec/pacing';
import { ReferenceResolutionError } from '../spec/errors';
import { resolveReferences } from '../spec/references';
import type { PipelineStep } from '../spec/spec';
import { pipelineProgressQuery, resolveAmbiguousUpdate, stepEventSignal, stepKeyOf } from './definitions';
import { type PipelineSummary, type PipelineWorkflowInput, type StepAttempt, type StepSummary } from './pipeline-types';
import { archivedOrUrl, archiveStep } from './steps/archive';
import { reportingToBatch } from './batch-item';
import { OperatorConsole } from './steps/console';
import { checks } from './steps/proxies';
import { Inbox } from './steps/inbox';
import { foldStep } from './steps/ledger';
import {
  endAfterStepError,
  finish,
  firstApplicationFailure,
  publisherFor,
  sumLedger,
  type Publish,
} from './steps/publish';
import { PendingCharges, StepQuote } from './steps/quote';
import { preflightSteps } from './steps/preflight';
import { runStep } from './steps/run-step';
import type { StepEnd, StepRun } from './steps/step-run';

/**
 * A pipeline: its steps run in order inside this one workflow (quote, submit and subscribe, wait
 * for the webhook, settle, resubmit policy, cancel; see ./steps), each step's input resolved from
 * earlier outputs. Webhook events arrive here directly (`jobEvent` signal). Keeps the credit ledger
 * and per-step state (progress query, search attributes, memo). Cancelling it cancels the job in
 * flight, awaits its terminal state and starts no later step.
 */
export async function pipelineWorkflow(input: PipelineWorkflowInput): Promise<PipelineSummary> {
  // An item of a batch reports its end to the batch.
  if (input.batch)
    return reportingToBatch(input.batch.workflowId, input.spec.name, workflowInfo().workflowId, (observe) =>
      runPipeline(input, observe),
    );
  return runPipeline(input);
}

async function runPipeline(
  input: PipelineWorkflowInput,
  observe?: (summary: PipelineSummary) => void,
): Promise<PipelineSummary> {
  const { spec } = input;
  const info = workflowInfo();
  const summary = initialSummary(input);
  observe?.(summary);
  const inbox = new Inbox();
  const charges = new PendingCharges();
  const requestIds = (): string[] => summary.steps.flatMap((s) => s.requestIds);
  // Registered before the first await: an event that overtakes its submit's answer is kept.
  setHandler(stepEventSignal, (event) => inbox.accept(event));
  setHandler(pipelineProgressQuery, () => ({ ...summary, events: inbox.counts(requestIds()) }));
  const basePublish = publisherFor(input);
  // Abandoned jobs and ambiguous submits, with the operator's update to resolve the latter.
  const recovery: RecoveryState = { abandoned: [], ambiguous: [] };
  let recoveryShown = '';
  setHandler(
    resolveAmbiguousUpdate,
    (decision) => {
      const waiting = recovery.waiting as AmbiguousSubmit;
      recovery.decision = decision;
      return {
        step: waiting.step,
        action: decision.action,
        idempotencyKey: waiting.idempotencyKey,
        ...(decision.requestId ? { requestId: decision.requestId } : {}),
      };
    },
    { validator: (decision) => validateResolution(recovery.waiting, decision) },
  );
  if (input.resume) {
    summary.resumedFrom = {
      workflowId: input.resume.workflowId,
      runId: input.resume.runId,
      ledger: input.resume.ledger,
      carriedSteps: Object.keys(input.resume.steps),
    };
  }
  const operator = new OperatorConsole(summary, (s) => publish(s), input.publishSearchAttributes !== false);
  const publish: Publish = (s) => {
    s.events = inbox.counts(requestIds());
    if (recovery.abandoned.length || recovery.ambiguous.length) {
      s.recovery = { abandoned: recovery.abandoned, ambiguous: recovery.ambiguous };
      // The memo changes only when the record does (each upsert is a command in the history).
      const shown = JSON.stringify(s.recovery);
      if (shown !== recoveryShown) {
        recoveryShown = shown;
        upsertMemo({ [RECOVERY_MEMO_KEY]: s.recovery });
      }
    }
    basePublish(s);
    operator.show(s);
  };
  operator.register();
  publish(summary);

  // Validation needs zod, which stays out of the workflow sandbox: a local activity on this worker.
  const checked = await checks.validatePipeline(spec, input.uriRules);
  if (!checked.ok) {
    return finish(
      summary,
      'failed',
      publish,
      ApplicationFailure.create({
        type: FAILURE_TYPES.invalidPipelineSpec,
        nonRetryable: true,
        message: `invalid pipeline spec:\n${checked.message}`,
        details: [{ errors: checked.errors }],
      }),
    );
  }

  // Inputs the service would refuse stop the pipeline here, before any step is paid for.
  if (input.preflight !== false) {
    const refused = await preflightSteps(spec.steps, summary);
    if (refused) return finish(summary, 'failed', publish, refused);
  }

  for (const [index, step] of spec.steps.entries()) {
    const row = summary.steps[index] as StepSummary;
    // No step starts after a cancel.
    const stopped = operator.cancelReason(step.id);
    // The ledger quotes of earlier steps close the ledger before the pipeline does.
    if (CancellationScope.current().consideredCancelled || stopped !== undefined) await charges.settled();
    if (CancellationScope.current().consideredCancelled)
      return finish(summary, 'cancelled', publish, new CancelledFailure('pipeline cancelled'));
    if (stopped !== undefined) return cancelledByOperator(summary, row, stopped, publish);
    summary.currentStep = step.id;
    const carried = input.resume?.steps[step.id];
    if (carried) {
      // Resumed run: the step completed (and was paid) in an earlier run; its output is taken over.
      row.status = 'completed';
      row.carriedFrom = carried.paidInRunId;
      row.output = carried.output;
      summary.outputs[step.id] = carried.output;
      continue;
    }
    row.status = 'running';
    row.startedAt = Date.now();
    let resolved: Record<string, unknown>;
    try {
      // An earlier output that was archived is read through its archived copy (service URL kept).
      resolved = resolveReferences(step.input, summary.outputs, (value) => archivedOrUrl(summary, value));
    } catch (error) {
      if (!(error instanceof ReferenceResolutionError)) throw error;
      row.status = 'failed';
      row.error = error.message;
      return finish(
        summary,
        'failed',
        publish,
        ApplicationFailure.create({
          type: FAILURE_TYPES.stepFailed,
          nonRetryable: true,
          message: `step ${step.id}: ${error.message}`,
        }),
      );
    }
    row.input = resolved;
    const run = stepRun(input, info, step, row, resolved, inbox, summary, publish, recovery, charges);
    publish(summary);

    let ended: StepEnd;
    const netBefore = summary.ledger.net;
    try {
      ended = await operator.runStep(run, netBefore, () => runStep(run));
    } catch (error) {
      await charges.settled();
      foldStep(run);
      summary.ledger = sumLedger(summary.steps);
      return endAfterStepError(summary, row, firstApplicationFailure(error), error, publish);
    }

    if (ended !== 'completed') await charges.settled();
    foldStep(run);
    summary.ledger = sumLedger(summary.steps);
    if (ended === 'completed' && row.output) {
      row.status = 'completed';
      summary.outputs[step.id] = row.output;
      await archiveStep(spec, index, row);
      publish(summary);
      continue;
    }
    row.status = ended === 'completed-too-late' ? 'completed-too-late' : 'cancelled';
    if (CancellationScope.current().consideredCancelled)
      return finish(summary, 'cancelled', publish, new CancelledFailure('pipeline cancelled'));
    const operatorReason = operator.cancelReason(step.id);
    if (operatorReason !== undefined) return cancelledByOperator(summary, row, operatorReason, publish);
    // The step's job was cancelled at the service by someone else: the chain cannot go on.
    return finish(
      summary,
      'failed',
      publish,
      ApplicationFailure.create({
        type: FAILURE_TYPES.stepCancelled,
        nonRetryable: true,
        message: `pipeline ${spec.name}: step ${step.id} was cancelled outside the pipeline (${row.status}); no later step was started`,
        details: [summary],
      }),
    );
  }
  summary.currentStep = null;
  // The ledger quotes that ran beside later steps (results without a charge) close the ledger.
  await charges.settled();
  summary.ledger = sumLedger(summary.steps);
  return finish(summary, 'completed', publish);
}

/**
 * Ends a pipeline whose step an operator cancelled (cancelStep or cancelPipeline update): the step is
 * `cancelled` (or `completed-too-late`, its output kept), no later step starts, and the workflow fails
 * with StepCancelled naming the reason (an update cannot make Temporal record a cancellation).
 */
function cancelledByOperator(
  summary: PipelineSummary,
  row: StepSummary,
  reason: string,
  publish: Publish,
): PipelineSummary {
  if (row.status === 'pending') row.status = 'cancelled';
  row.error = `cancelled by an operator: ${reason}`;
  return finish(
    summary,
    'cancelled',
    publish,
    ApplicationFailure.create({
      type: FAILURE_TYPES.stepCancelled,
      nonRetryable: true,
      message: `pipeline ${summary.name}: step ${row.id} was cancelled by an operator (${reason}); no later step was started`,
      details: [summary],
    }),
  );
}

function initialSummary(input: PipelineWorkflowInput): PipelineSummary {
  const { spec } = input;
  return {
    name: spec.name,
    status: 'running',
    currentStep: null,
    budgetCredits: spec.budgetCredits ?? null,
    ledger: { quoted: 0, charged: 0, refunded: 0, net: 0 },
    steps: spec.steps.map((step) => ({
      id: step.id,
      model: step.model,
      status: 'pending',
      stepKey: stepKeyOf(spec.name, step.id),
      requestIds: [],
      attempts: 0,
      quoted: 0,
      charged: 0,
      refunded: 0,
      polls: 0,
    })),
    outputs: {},
  };
}

/** The working set of one step (see StepRun). */
function stepRun(
  input: PipelineWorkflowInput,
  info: ReturnType<typeof workflowInfo>,
  step: PipelineStep,
  row: StepSummary,
  resolved: Record<string, unknown>,
  inbox: Inbox,
  summary: PipelineSummary,
  publish: Publish,
  recovery: RecoveryState,
  charges: PendingCharges,
): StepRun {
  const attempts: StepAttempt[] = [];
  row.attemptLog = attempts;
  const run: StepRun = {
    workflowId: info.workflowId,
    firstRunId: info.firstExecutionRunId,
    stepKey: row.stepKey,
    stepId: step.id,
    model: step.model,
    input: resolved,
    row,
    attempts,
    inbox,
    quote: new StepQuote(step.model, resolved, step.id),
    charges,
    pacing: resolvePacing(MODELS[step.model].expectedRunSeconds, { ...input.defaultPacing, ...step.pacing }),
    maxResubmits: step.retry?.maxResubmits ?? 0,
    // The summary's budget: the spec's, or what a raiseBudget update made it.
    ...(summary.budgetCredits !== null ? { budgetRemaining: summary.budgetCredits - summary.ledger.net } : {}),
    ...(input.submitTimeoutSeconds !== undefined ? { submitTimeoutSeconds: input.submitTimeoutSeconds } : {}),
    recovery,
    ...(input.ambiguousDeadlineHours !== undefined ? { ambiguousDeadlineHours: input.ambiguousDeadlineHours } : {}),
    changed: () => {
      foldStep(run);
      summary.ledger = sumLedger(summary.steps);
      publish(summary);
    },
  };
  return run;
}
