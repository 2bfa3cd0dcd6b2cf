/** What a pipeline records about paid jobs it could not keep (memo `recovery`, read by `reelflow orphans`). */

/** An accepted (billed) job the pipeline could neither use nor cancel. */
export interface AbandonedJob {
  step: string;
  /** Known when the service named it; absent when not even that could be read. */
  requestId?: string;
  idempotencyKey: string;
  /** Why it was abandoned (the failure that came after acceptance, and why cancelling did not work). */
  reason: string;
  /** ISO time it was recorded. */
  at: string;
}

/** A submit that may have created a job whose request id is unknown. */
export interface AmbiguousSubmit {
  step: string;
  idempotencyKey: string;
  /** ISO time the step became ambiguous. */
  since: string;
  /** `waiting` for an operator decision, or how it was resolved. */
  state: 'waiting' | 'adopted' | 'resubmitted' | 'given-up' | 'timed-out';
  /** Set once resolved by adopting a request id. */
  requestId?: string;
  /** Charged jobs in the ledger no pipeline claims, around the time of the submit (request ids). */
  candidates?: string[];
}

/** The memo field `recovery` of a pipeline. */
export interface RecoveryMemo {
  abandoned: AbandonedJob[];
  ambiguous: AmbiguousSubmit[];
}

/** Memo key under which a pipeline publishes its RecoveryMemo. Pinned: `reelflow orphans` reads it from running and closed executions. */
export const RECOVERY_MEMO_KEY = 'recovery';

/**
 * The operator's decision on an ambiguous step (a submit that may have created a job whose request
 * id is unknown), sent as the Temporal update `resolveAmbiguousStep`:
 * - `adopt`: this request id is the step's job (found by its Idempotency-Key, the ledger, or
 *   `reelflow orphans`); the step waits for it like any submitted job.
 * - `resubmit`: send the submit again with the same Idempotency-Key (a service that honours it
 *   returns the job; one that does not creates a new one: the operator judged it did not exist).
 * - `give-up`: the step fails; the key stays listed by `reelflow orphans`.
 */
export interface ResolveDecision {
  step: string;
  action: 'adopt' | 'resubmit' | 'give-up';
  /** Required for `adopt`. */
  requestId?: string;
  /** Who decided and why (kept in the step's record). */
  note?: string;
}

/** The update's answer: what the step will do. */
export type ResolveAnswer = Pick<ResolveDecision, 'step' | 'action' | 'requestId'> & { idempotencyKey: string };
