import type { AmbiguousSubmit, RecoveryMemo, ResolveDecision } from './recovery-types';

/** Request ids the service issues are opaque; this only keeps out what cannot be one (blank, whitespace, paths, huge). */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,200}$/;

/**
 * The update's validator (pure, so the same rule rejects before anything is written to history):
 * an ambiguous step must be waiting, the decision must name it, the action must be known, and
 * `adopt` needs a plausible request id. Throws an Error naming the field and the reason.
 */
export function validateResolution(waiting: AmbiguousSubmit | undefined, decision: ResolveDecision): void {
  if (!decision || typeof decision !== 'object')
    throw new Error('decision: must be an object {step, action, requestId?}');
  if (!waiting || waiting.state !== 'waiting')
    throw new Error(
      `step: no ambiguous step is waiting for a decision${waiting ? ` (step ${waiting.step} is ${waiting.state})` : ''}`,
    );
  if (decision.step !== waiting.step)
    throw new Error(`step: the waiting ambiguous step is ${waiting.step}, not ${String(decision.step)}`);
  if (decision.action !== 'adopt' && decision.action !== 'resubmit' && decision.action !== 'give-up') {
    throw new Error(`action: must be adopt, resubmit or give-up (got ${JSON.stringify(decision.action)})`);
  }
  if (
    decision.action === 'adopt' &&
    (typeof decision.requestId !== 'string' || !REQUEST_ID_PATTERN.test(decision.requestId))
  ) {
    throw new Error('requestId: adopt needs the request id of the job (letters, digits, . _ : -; up to 200)');
  }
  if (decision.action !== 'adopt' && decision.requestId !== undefined)
    throw new Error(`requestId: only adopt takes a request id`);
  if (decision.note !== undefined && (typeof decision.note !== 'string' || decision.note.length > 500))
    throw new Error('note: must be text of at most 500 characters');
}

/** A pipeline's recovery record as the workflow keeps it: the memo part plus what is pending now. */
export interface RecoveryState extends RecoveryMemo {
  /** The ambiguous step waiting for a decision (one step runs at a time). */
  waiting?: AmbiguousSubmit;
  /** The decision the update handler accepted, taken by the waiting step. */
  decision?: ResolveDecision;
}
