import { ApplicationFailure, TemporalFailure } from '@temporalio/workflow';
import { SEARCH_ATTRIBUTES } from '../definitions';
import { RECOVERY_MEMO_KEY } from '../recovery-types';
import type { PipelineSummary } from '../pipeline-types';

/** How a pipeline shows itself outside: search attributes and memo for the Temporal UI (published by ../pipeline-state.ts). */

/** The search attributes a summary shows in the Temporal UI (status and progress, and what saved views filter on). */
export function searchAttributesOf(summary: PipelineSummary) {
  return [
    { key: SEARCH_ATTRIBUTES.status, value: summary.status },
    { key: SEARCH_ATTRIBUTES.currentStep, value: summary.currentStep ?? '' },
    { key: SEARCH_ATTRIBUTES.creditsSpent, value: summary.ledger.net },
    { key: SEARCH_ATTRIBUTES.requestIds, value: summary.steps.flatMap((s) => s.requestIds) },
    { key: SEARCH_ATTRIBUTES.pipeline, value: summary.name },
    { key: SEARCH_ATTRIBUTES.models, value: [...new Set(summary.steps.map((s) => s.model))] },
    { key: SEARCH_ATTRIBUTES.overBudget, value: summary.steps.some((s) => s.status === 'budget-exceeded') },
  ];
}

/** The memo a summary shows in the Temporal UI, with the recovery record (`reelflow orphans`) once there is one. */
export function memoOf(summary: PipelineSummary) {
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
    ...(summary.recovery ? { [RECOVERY_MEMO_KEY]: summary.recovery } : {}),
  };
}

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
