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
