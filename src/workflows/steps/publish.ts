import {
  ApplicationFailure,
  CancelledFailure,
  TemporalFailure,
  isCancellation,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../contract/failure-types';
import { SEARCH_ATTRIBUTES } from '../definitions';
import {
  type CreditLedger,
  type PipelineSummary,
  type PipelineWorkflowInput,
  type StepSummary,
} from '../pipeline-types';

/** How a pipeline shows itself outside: search attributes and memo for the Temporal UI, and the end of the run. */

/** The search attributes a summary shows in the Temporal UI. */
function searchAttributesOf(summary: PipelineSummary) {
  return [
    { key: SEARCH_ATTRIBUTES.status, value: summary.status },
    { key: SEARCH_ATTRIBUTES.currentStep, value: summary.currentStep ?? '' },
    { key: SEARCH_ATTRIBUTES.creditsSpent, value: summary.ledger.net },
    { key: SEARCH_ATTRIBUTES.requestIds, value: summary.steps.flatMap((s) => s.requestIds) },
  ];
}

/** The memo a summary shows in the Temporal UI. */
function memoOf(summary: PipelineSummary) {
  return {
    summary: {
      status: summary.status,
      currentStep: summary.currentStep,
      ledger: summary.ledger,
      steps: summary.steps.map((s) => ({
        id: s.id,
        status: s.status,
        requestIds: s.requestIds,
        error: s.error ?? null,
      })),
      error: summary.error ?? null,
    },
  };
}

export type Publish = (summary: PipelineSummary) => void;

/** Runs `upsert` with `value` unless the last value it ran with was the same (compared as JSON). */
export function whenChanged<T>(upsert: (value: T) => void): (value: T) => void {
  let last: string | undefined;
  return (value) => {
    const shown = JSON.stringify(value);
    if (shown === last) return;
    last = shown;
    upsert(value);
  };
}

/**
 * The publisher a pipeline input asks for (memo only on a namespace without reelflow's search
 * attributes). Each upsert is skipped when it would repeat the previous one: an upsert is a command,
 * a history event and a visibility write, and a step publishes four to six times, most of them
 * changing nothing (docs/benchmarks.md, operator console cost).
 */
export function publisherFor(input: Pick<PipelineWorkflowInput, 'publishSearchAttributes'>): Publish {
  const attributes = whenChanged(upsertSearchAttributes);
  const memo = whenChanged(upsertMemo);
  return (summary) => {
    if (input.publishSearchAttributes !== false) attributes(searchAttributesOf(summary));
    memo(memoOf(summary));
  };
}

/** The pipeline ledger: every step's quote, charges and refunds summed. */
export function sumLedger(steps: readonly StepSummary[]): CreditLedger {
  return steps.reduce(
    (ledger, s) => ({
      quoted: ledger.quoted + s.quoted,
      charged: ledger.charged + s.charged,
      refunded: ledger.refunded + s.refunded,
      net: ledger.net + s.charged - s.refunded,
    }),
    { quoted: 0, charged: 0, refunded: 0, net: 0 },
  );
}

/** Ends the pipeline: steps never started become `skipped`; returns the summary or throws `failure`. */
export function finish(
  summary: PipelineSummary,
  status: PipelineSummary['status'],
  publish: Publish,
  failure?: Error,
): PipelineSummary {
  summary.status = status;
  for (const step of summary.steps) if (step.status === 'pending') step.status = 'skipped';
  if (failure && !(failure instanceof CancelledFailure)) summary.error = failure.message;
  publish(summary);
  if (failure) throw failure;
  return summary;
}

/**
 * The failure that says why a step failed: the step's own (budget, failed attempts, ambiguous
 * submit) or, when an activity was refused by the service (402 insufficient credits, 422 on the
 * quote), that activity's failure, which carries the service's code and reason.
 */
export function firstApplicationFailure(failure: unknown): ApplicationFailure | undefined {
  for (let current = failure; current instanceof TemporalFailure; current = current.cause) {
    if (current instanceof ApplicationFailure) return current;
  }
  return undefined;
}

/**
 * Ends the pipeline after step `row` threw `error` (`failure`: the ApplicationFailure that says why,
 * if any): budget → `BudgetExceeded`, any other failure → `StepFailed` naming the cause's type, a
 * cancellation → cancelled. Always throws (through `finish`).
 */
export function endAfterStepError(
  summary: PipelineSummary,
  row: StepSummary,
  failure: ApplicationFailure | undefined,
  error: unknown,
  publish: Publish,
): PipelineSummary {
  const name = summary.name;
  if (failure) {
    row.error = failure.message;
    if (failure.type === FAILURE_TYPES.budgetExceeded) {
      row.status = 'budget-exceeded';
      return finish(
        summary,
        'failed',
        publish,
        ApplicationFailure.create({
          type: FAILURE_TYPES.budgetExceeded,
          nonRetryable: true,
          message: `pipeline ${name} stopped before step ${row.id}: ${failure.message}`,
          details: [summary],
        }),
      );
    }
    row.status = 'failed';
    return finish(
      summary,
      'failed',
      publish,
      ApplicationFailure.create({
        type: FAILURE_TYPES.stepFailed,
        nonRetryable: true,
        message: `pipeline ${name} failed at step ${row.id} [${failure.type ?? 'Error'}]: ${failure.message}`,
        details: [summary],
      }),
    );
  }
  if (isCancellation(error)) {
    row.status = 'cancelled';
    return finish(summary, 'cancelled', publish, new CancelledFailure('pipeline cancelled'));
  }
  row.status = 'failed';
  row.error = error instanceof Error ? error.message : String(error);
  return finish(
    summary,
    'failed',
    publish,
    ApplicationFailure.create({
      type: FAILURE_TYPES.stepFailed,
      nonRetryable: true,
      message: `pipeline ${name} failed at step ${row.id}: ${row.error}`,
      details: [summary],
    }),
  );
}
