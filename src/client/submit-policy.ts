/**
 * The one submit policy, so that no failure pays twice: what the client does after a submit failed,
 * by what is known about the failure and by whether the service honours `Idempotency-Key`
 * (`REELFLOW_SERVICE_IDEMPOTENCY`, read in src/config). The table is data so docs/submit-policy.md,
 * the client and the tests state the same thing.
 */

/** Whether the service returns the original job for a repeated `Idempotency-Key`. */
export type IdempotencySetting = 'honoured' | 'unknown';
export const IDEMPOTENCY_SETTINGS: readonly IdempotencySetting[] = ['honoured', 'unknown'];

/**
 * What is known about a failed submit.
 * - `not-sent`: the request provably never reached the service (refused, DNS, connect timeout).
 * - `refused`: the service answered that it did not accept it (429, `rate_limited`, `service_unavailable`).
 * - `maybe-sent`: it may have been accepted: the answer was lost or late, or a 5xx that does not say
 *   the job was refused, or an earlier attempt died with the worker.
 * - `rejected`: a definite answer that retrying cannot change (4xx: validation, auth, credits, conflict).
 * - `bad-answer`: a 2xx whose body breaks the contract: the job was accepted and is billed.
 */
export type SubmitFailureKind = 'not-sent' | 'refused' | 'maybe-sent' | 'rejected' | 'bad-answer';
export const SUBMIT_FAILURE_KINDS: readonly SubmitFailureKind[] = [
  'not-sent',
  'refused',
  'maybe-sent',
  'rejected',
  'bad-answer',
];

/**
 * What happens next.
 * - `retry`: again with the same key, within the submit retry rule (bounded).
 * - `ambiguous`: not retried; the step waits for an operator decision (adopt / resubmit / give up).
 * - `final`: the step fails with this error (for `bad-answer`: after cancelling or recording the job).
 */
export type SubmitAction = 'retry' | 'ambiguous' | 'final';

export const SUBMIT_POLICY: Readonly<Record<SubmitFailureKind, Readonly<Record<IdempotencySetting, SubmitAction>>>> = {
  'not-sent': { honoured: 'retry', unknown: 'retry' },
  refused: { honoured: 'retry', unknown: 'retry' },
  // The key makes a repeat return the job the lost answer would have named: adopt it.
  'maybe-sent': { honoured: 'retry', unknown: 'ambiguous' },
  rejected: { honoured: 'final', unknown: 'final' },
  'bad-answer': { honoured: 'final', unknown: 'final' },
};

/** The action for a failure kind under a setting. */
export function submitAction(kind: SubmitFailureKind, setting: IdempotencySetting): SubmitAction {
  return SUBMIT_POLICY[kind][setting];
}

/**
 * What a `maybe-sent` failure becomes once the retry rule's attempts are used up (honoured): the
 * job may exist, so it is ambiguous, never silently final.
 */
export const EXHAUSTED_RETRY_ACTION: Record<SubmitFailureKind, SubmitAction> = {
  'not-sent': 'final',
  refused: 'final',
  'maybe-sent': 'ambiguous',
  rejected: 'final',
  'bad-answer': 'final',
};
