import type { JobResult, JobState } from '../../contract';
import type { StepAttempt } from '../pipeline-types';
import { ACTIVITY_SUMMARIES } from '../../spec/ui-text';
import { releasePermit } from './permit';
import { apiWith } from './proxies';
import type { StepRun } from './step-run';

/**
 * Records the terminal state of `attempt`. COMPLETED: the result from its signed webhook event when
 * the event carried a whole one, else fetched from `response_url`; the charge is the result's
 * `credits_used` when it says, else the step's price (quoted beside what follows when not known yet:
 * nothing waits on a ledger quote). FAILED or CANCELLED: the service refunds automatically (charge
 * and refund are the step's price); the service's reason (from the failure event, when the status
 * poll gave none) stays on the attempt.
 */
export async function settle(run: StepRun, attempt: StepAttempt, terminal: JobState): Promise<void> {
  attempt.outcome = terminal;
  // The job is no longer in flight at the service: its permit goes back before anything else.
  await releasePermit(attempt);
  run.row.lastChangeAt = Date.now();
  if (terminal !== 'COMPLETED') {
    // The service charged the price on submit and refunded it: both are the step's price.
    await run.quote.chargeOf(attempt);
    attempt.refunded = attempt.charged;
    const reason = attempt.serviceError ?? run.inbox.errorOf(attempt.requestId as string);
    if (reason) attempt.serviceError = reason;
    return;
  }
  const requestId = attempt.requestId as string;
  const carried = attempt.learnedBy === 'webhook' ? run.inbox.resultOf(requestId) : undefined;
  let result: JobResult;
  if (carried) {
    result = carried;
    attempt.resultFrom = 'event';
  } else {
    run.row.phase = 'fetching-result';
    result = await apiWith(ACTIVITY_SUMMARIES.result(run.stepId, requestId)).fetchJobResult(
      requestId,
      attempt.responseUrl,
    );
    attempt.resultFrom = 'fetch';
  }
  run.row.output = result;
  if (result.credits_used !== null) attempt.charged = result.credits_used;
  else if (run.quote.credits !== undefined) attempt.charged = run.quote.credits;
  // No charge in the result and no price yet: the ledger's quote runs beside what follows.
  else run.charges.add(run.quote.chargeOf(attempt), run.changed);
}
