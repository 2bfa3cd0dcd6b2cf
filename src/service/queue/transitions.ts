import type { JobState } from '../../contract';

/**
 * The one table of allowed job state moves (decision #1 in docs/spec-decisions.md):
 * IN_QUEUE → IN_PROGRESS → COMPLETED | FAILED, and a cancel from either live state.
 * Terminal states have no way out.
 */
export const TRANSITIONS: Readonly<Record<JobState, readonly JobState[]>> = {
  IN_QUEUE: ['IN_PROGRESS', 'CANCELLED'],
  IN_PROGRESS: ['COMPLETED', 'FAILED', 'CANCELLED'],
  COMPLETED: [],
  FAILED: [],
  CANCELLED: [],
};

/** True when a job in state `from` may move to `to`. */
export function canTransition(from: JobState, to: JobState): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Thrown when code asks for a move the table forbids; a bug, never a client error. */
export class IllegalTransitionError extends Error {
  readonly code = 'illegal_transition';
  constructor(
    readonly requestId: string,
    readonly from: JobState,
    readonly to: JobState,
  ) {
    super(`job ${requestId}: ${from} -> ${to} is not an allowed transition`);
    this.name = 'IllegalTransitionError';
  }
}
