import { gateState } from './approval-lines';
import type { StepAttempt } from '../../workflows/pipeline-types';
import { formatElapsed, stepElapsedMs, stepState, waitingNote, type StepView } from './step-view';

/**
 * The columns of a step's line after its name, shared by the flat list of a version-1 pipeline and
 * the tree of a graph, so both read the same.
 */
export interface StepColumns {
  state: string;
  request: string;
  elapsed: string;
  credits: string;
  note: string;
  error: string;
}

/** `90 credits (refunded 10)`, `quoted 100`, or '' when nothing was quoted or charged. */
export function creditsText(charged: number, refunded: number, quoted = 0): string {
  if (charged > 0) return `${charged - refunded} credits${refunded ? ` (refunded ${refunded})` : ''}`;
  return quoted ? `quoted ${quoted}` : '';
}

/** A step's columns; `observedMs` is the elapsed time a follower saw, for pipelines that report no times. */
export function stepColumns(step: StepView, now: number, observedMs?: number): StepColumns {
  const request = step.requestIds.at(-1) ?? lastRequestOf(step.attemptLog) ?? '-';
  const elapsedMs = stepElapsedMs(step, now) ?? observedMs;
  return {
    state: gateState(step) ?? stepState(step),
    request,
    elapsed: elapsedMs === undefined ? '' : formatElapsed(elapsedMs),
    credits: creditsText(step.charged, step.refunded, step.quoted),
    note: waitingNote(step, now),
    error: step.error ? `  ${step.error}` : '',
  };
}

/** The columns joined after a name column already padded. */
export function joinColumns(name: string, columns: StepColumns): string {
  const { state, request, elapsed, credits, note, error } = columns;
  return `${name} ${state.padEnd(24)} ${request.padEnd(36)} ${elapsed.padEnd(8)} ${credits}${note ? `  (${note})` : ''}${error}`.trimEnd();
}

function lastRequestOf(log: readonly StepAttempt[] | undefined): string | undefined {
  return log?.at(-1)?.requestId;
}
