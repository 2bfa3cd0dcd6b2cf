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
    {
      key: SEARCH_ATTRIBUTES.models,
      value: [...new Set(summary.steps.flatMap((s) => ('model' in s ? [s.model] : [])))],
    },
    { key: SEARCH_ATTRIBUTES.overBudget, value: summary.steps.some((s) => s.status === 'budget-exceeded') },
  ];
}

/**
 * What moves a pipeline's search attributes (and, without them, its memo): its status, its request ids
 * (`reelflow orphans` claims a running pipeline's jobs by them) and whether a budget stopped it. The
 * step in flight and the credits ride along: publishing them on every move would cost two events a step.
 */
export function stateOperatorsFilterOn(summary: PipelineSummary): string {
  return JSON.stringify([
    summary.status,
    summary.steps.map((s) => s.requestIds),
    summary.steps.some((s) => s.status === 'budget-exceeded'),
  ]);
}

/**
 * The memo of a pipeline: its recovery record once there is one, and a summary when there are no
 * search attributes. The keys (`recovery`, `summary`) are pinned: `reelflow` reads them from running and closed executions.
 */
export function memoOf(summary: PipelineSummary, withAttributes = false) {
  const { status, currentStep, ledger, steps, error, recovery } = summary;
  const shown = steps.map((s) => ({ id: s.id, status: s.status, requestIds: s.requestIds, error: s.error ?? null }));
  return {
    ...(withAttributes ? {} : { summary: { status, currentStep, ledger, steps: shown, error: error ?? null } }),
    ...(recovery ? { [RECOVERY_MEMO_KEY]: recovery } : {}),
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

/** The failure that says why a step failed: the step's own, or that of the activity the service refused. */
export function firstApplicationFailure(failure: unknown): ApplicationFailure | undefined {
  for (let current = failure; current instanceof TemporalFailure; current = current.cause) {
    if (current instanceof ApplicationFailure) return current;
  }
  return undefined;
}
