import { CancelledFailure, isCancellation } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../contract/failure-types';
import type { PipelineState } from '../pipeline-state';
import { firstApplicationFailure } from './publish';

/** Ends the pipeline after step `stepId` threw `error`: BudgetExceeded, rejected at a gate, StepFailed naming the cause, or cancelled. */
export function endAfterStepError(state: PipelineState, index: number, stepId: string, error: unknown): never {
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
