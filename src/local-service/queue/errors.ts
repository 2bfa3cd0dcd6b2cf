import { ReelflowError, type JobState } from '../../contract';

/** Thrown when code asks for a move the table forbids; a bug, never a client error. */
export class IllegalTransitionError extends ReelflowError {
  readonly code = 'illegal_transition';
  constructor(
    readonly requestId: string,
    readonly from: JobState,
    readonly to: JobState,
  ) {
    super(`job ${requestId}: ${from} -> ${to} is not an allowed transition`);
  }
}
