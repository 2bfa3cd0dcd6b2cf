import { CancellationScope, CancelledFailure, isCancellation, setHandler, workflowInfo } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../contract/failure-types';
import { ReferenceResolutionError } from '../pipeline-spec/errors';
import { resolveReferences } from '../pipeline-spec/references';
import {
  cancelPipelineUpdate,
  cancelStepUpdate,
  pipelineProgressQuery,
  raiseBudgetUpdate,
  retryStepUpdate,
  stepKeyOf,
} from './definitions';
import { checkCancelPipeline, checkCancelStep, checkRaiseBudget, checkRetryStep } from './operator-updates';
import { PipelineState } from './pipeline-state';
import type { PipelineSummary, PipelineWorkflowInput } from './pipeline-types';
import { archiveOutputs, archivedOrUrl } from './pipeline/archive';
import { reportingToBatch } from './batch-item';
import { checkBeforeAnyPay } from './pipeline/preflight';
import { firstApplicationFailure } from './pipeline/publish';
import { workflowJobs } from './steps/job/workflow-jobs';
import type { StepOutcome } from './steps/kind';
import { kindOf, stepKinds } from './steps/registry';

/**
 * A pipeline: its steps run in order inside this one workflow, each run by its kind
 * (src/workflows/steps/: a paid job of the service), its input resolved from earlier outputs.
 * Cancelling it cancels the step in flight (a job: at the service, its terminal state awaited) and
 * starts no later step.
 */
export async function pipelineWorkflow(input: PipelineWorkflowInput): Promise<PipelineSummary> {
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
  // The kinds' handlers are set before the first await: an event that overtakes its submit's answer is kept.
  for (const kind of stepKinds()) kind.open();
  const state: PipelineState = new PipelineState(input, workflowJobs(), observe);
  answerOperators(state);

  const submitAs = await checkBeforeAnyPay(input, state);

  // Archive copies start once the next submit was answered (never competing with it); awaited only at the close.
  const archives = new Map<string, Promise<void>>();
  const held: (() => void)[] = [];
  const release = () => held.splice(0).forEach((start) => start());
  const closing = async () => {
    release();
    // A step the bridge may submit once the job before it completes must not be submitted now (or is cancelled).
    for (const kind of stepKinds()) await kind.revokeAhead();
    await Promise.all(archives.values());
    // The ledger quotes that ran beside later steps (results without a charge) close the ledger.
    for (const kind of stepKinds()) await kind.settled();
  };

  /**
   * No step starts, or goes on, after a cancel. An operator's fails the pipeline with StepCancelled
   * naming the reason: an update cannot make Temporal record a cancellation.
   */
  const endIfCancelled = async (index: number, stepId: string) => {
    if (!CancellationScope.current().consideredCancelled && state.cancelReason(stepId) === undefined) return;
    await closing();
    if (CancellationScope.current().consideredCancelled)
      state.stop('cancelled', new CancelledFailure('pipeline cancelled'));
    const reason = state.cancelReason(stepId) as string;
    const { status } = state.summary().steps[index] ?? {};
    state.update(index, {
      ...(status === 'pending' ? { status: 'cancelled' } : {}),
      error: `cancelled by an operator: ${reason}`,
    });
    state.fail(
      FAILURE_TYPES.stepCancelled,
      `pipeline ${spec.name}: step ${stepId} was cancelled by an operator (${reason}); no later step was started`,
      'cancelled',
    );
  };

  for (const [index, step] of spec.steps.entries()) {
    const kind = kindOf(step);
    const carried = input.resume?.steps[step.id];
    await endIfCancelled(index, step.id);
    if (carried) {
      state.carry(index, step.id, kind.resume(step, carried));
      continue;
    }
    state.startStep(index, step.id);
    // The service still serves the previous step's output: only a step reading an older one waits for its copy.
    const older = kind
      .dependencies(step)
      .filter((id) => id !== spec.steps[index - 1]?.id)
      .map((id) => archives.get(id) ?? Promise.resolve());
    if (older.length > 0) await Promise.all(older);
    let resolved: Record<string, unknown>;
    try {
      // An earlier output is read through its archived copy once there (it keeps the service URL).
      const summary = state.summary();
      resolved = resolveReferences(step.input, summary.outputs, (value) => archivedOrUrl(summary, value));
    } catch (error) {
      if (!(error instanceof ReferenceResolutionError)) throw error;
      state.update(index, { status: 'failed', error: error.message });
      state.fail(FAILURE_TYPES.stepFailed, `step ${step.id}: ${error.message}`);
    }
    state.update(index, { input: resolved });

    const outcome: StepOutcome | { status: 'error'; error: unknown } = await state
      .runStep(step.id, () =>
        kind.run(step, {
          index,
          stepKey: stepKeyOf(spec.name, step.id),
          input: resolved,
          pipeline: input,
          submitAs,
          budgetRemaining: () => state.budgetRemaining(),
          observe: state.observeStep(index, release),
          wakeBackoff: state.wakeBackoff(step.id),
        }),
      )
      .catch((error: unknown) => ({ status: 'error', error }) as const);
    if (outcome.status === 'completed') {
      state.update(index, { status: 'completed', finishedAt: Date.now() });
      const copied = new Promise<void>((start) => held.push(start))
        .then(() => archiveOutputs(spec, index, outcome.result))
        .then((copies) => state.update(index, copies));
      archives.set(step.id, copied);
      continue;
    }
    if (outcome.status === 'error') {
      await closing();
      endAfterStepError(state, index, step.id, outcome.error);
    }
    state.update(index, { status: outcome.status, finishedAt: Date.now() });
    await endIfCancelled(index, step.id);
    await closing();
    // The step was cancelled outside the pipeline (a job: at the service, by someone else): the chain cannot go on.
    state.fail(
      FAILURE_TYPES.stepCancelled,
      `pipeline ${spec.name}: step ${step.id} was cancelled outside the pipeline (${outcome.status}); no later step was started`,
    );
  }
  await closing();
  return state.complete();
}

/** The progress query and the operator updates (the Temporal UI's "Send an Update", `reelflow cancel|budget|retry`). */
function answerOperators(state: PipelineState): void {
  setHandler(pipelineProgressQuery, () => state.summary());
  setHandler(cancelStepUpdate, (args) => state.cancelStep(args), {
    validator: (args) => void checkCancelStep(state.summary(), args),
  });
  setHandler(cancelPipelineUpdate, (args) => state.cancelPipeline(args), {
    validator: (args) => checkCancelPipeline(state.summary(), args),
  });
  setHandler(raiseBudgetUpdate, (args) => state.raiseBudget(args), {
    validator: (args) => void checkRaiseBudget(state.summary(), args),
  });
  setHandler(retryStepUpdate, (args) => state.retryStep(args), {
    validator: (args) => void checkRetryStep(state.summary(), args),
  });
}

/** Ends the pipeline after step `stepId` threw `error`: BudgetExceeded, StepFailed naming the cause, or cancelled. */
function endAfterStepError(state: PipelineState, index: number, stepId: string, error: unknown): never {
  const failure = firstApplicationFailure(error);
  const name = state.summary().name;
  if (!failure && isCancellation(error)) {
    state.update(index, { status: 'cancelled', finishedAt: Date.now() });
    state.stop('cancelled', new CancelledFailure('pipeline cancelled'));
  }
  const message = failure?.message ?? (error instanceof Error ? error.message : String(error));
  if (failure?.type === FAILURE_TYPES.approvalRejected) {
    // A person (or the gate's timeout) said no: nothing after the gate starts.
    state.update(index, { status: 'rejected', error: message, finishedAt: Date.now() });
    state.fail(
      FAILURE_TYPES.approvalRejected,
      `pipeline ${name} was rejected at step ${stepId}: ${message}`,
      'rejected',
    );
  }
  const budget = failure?.type === FAILURE_TYPES.budgetExceeded;
  state.update(index, { status: budget ? 'budget-exceeded' : 'failed', error: message, finishedAt: Date.now() });
  if (budget) state.fail(FAILURE_TYPES.budgetExceeded, `pipeline ${name} stopped before step ${stepId}: ${message}`);
  state.fail(
    FAILURE_TYPES.stepFailed,
    `pipeline ${name} failed at step ${stepId}${failure ? ` [${failure.type ?? 'Error'}]` : ''}: ${message}`,
  );
}
