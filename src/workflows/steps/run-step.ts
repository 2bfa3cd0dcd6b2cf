import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  sleep,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../contract/failure-types';
import { TIMER_SUMMARIES } from '../../spec/ui-text';
import { cancelOrAbandon, reasonOf } from './abandon';
import { type StepAttempt } from '../pipeline-types';
import { cancelStep } from './cancel';
import { recordOutcome } from './ledger';
import { settle } from './settle';
import { idempotencyKeyFor, type StepEnd, type StepRun } from './step-run';
import { submit } from './submit';
import { awaitTerminal } from './wait';

/** Seconds to wait before resubmit number `resubmit` (1, 2, ...): 2, 4, 8, ... capped at one minute. */
export function resubmitBackoffSeconds(resubmit: number): number {
  return Math.min(60, 2 ** resubmit);
}

/**
 * One pipeline step as service requests: budget check (with a budget), submit and subscribe, wait
 * for the webhook (paced polls as the fallback), settle. A FAILED job is refunded and resubmitted
 * (after a backoff, with a fresh Idempotency-Key) only as the step's policy allows. On cancel the
 * paid job is cancelled and its terminal state awaited. Throws a non-retryable ApplicationFailure
 * (FAILURE_TYPES) for budget, failure past policy and an ambiguous submit.
 */
export async function runStep(run: StepRun): Promise<StepEnd> {
  try {
    for (let n = 1; ; n += 1) {
      // Budget before any spend: a FAILED attempt was refunded, so the remaining budget is unchanged.
      if (run.budgetRemaining !== undefined) await checkBudget(run, run.budgetRemaining);
      if (n > 1) {
        run.row.phase = 'backing-off';
        run.changed();
        const backoff = resubmitBackoffSeconds(n - 1);
        // The operator console can end the backoff early (`retryStep` update); the timer is the same.
        if (run.wakeBackoff)
          await condition(run.wakeBackoff, backoff * 1000, { summary: TIMER_SUMMARIES.backoff(run.stepId, backoff) });
        else await sleep(`${backoff} seconds`);
      }
      // The submit itself cannot be cancelled half-way, so a cancel that came while quoting stops here.
      if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('cancelled before the submit');
      const attempt: StepAttempt = {
        attempt: n,
        idempotencyKey: idempotencyKeyFor(run.stepKey, run.firstRunId, n),
        charged: 0,
        refunded: 0,
      };
      run.attempts.push(attempt);
      run.row.phase = 'submitting';
      await submit(run, attempt);
      run.row.submittedAt ??= Date.now();
      run.row.lastChangeAt = Date.now();
      run.row.phase = 'waiting';
      run.changed();
      let terminal: Awaited<ReturnType<typeof awaitTerminal>>;
      try {
        terminal = await awaitTerminal(run, attempt, run.pacing);
        await settle(run, attempt, terminal);
      } catch (error) {
        // A failure after the job was accepted (a poll answered 401, a status or result that breaks the
        // contract) must not leave the paid job running unnoticed: cancel it, or record it abandoned.
        if (isCancellation(error)) throw error;
        await cancelOrAbandon(run, attempt, `waiting for the job failed: ${reasonOf(error)}`);
        throw error;
      }
      if (terminal === 'COMPLETED') return end(run, 'completed');
      // Cancelled at the service by someone else: the step is over, refunded.
      if (terminal === 'CANCELLED') return end(run, 'cancelled');
      const reason = attempt.serviceError ? `${attempt.serviceError.code}: ${attempt.serviceError.message}` : undefined;
      attempt.error = `the service reported FAILED (refunded)${reason ? `: ${reason}` : ''}`;
      if (n > run.maxResubmits) {
        const message = `failed ${n} time(s); policy allows ${run.maxResubmits} resubmit(s); every attempt was refunded${reason ? `; the service said ${reason}` : ''}`;
        run.row.error = message;
        run.row.finishedAt = Date.now();
        recordOutcome(run, 'failed');
        throw ApplicationFailure.create({
          type: FAILURE_TYPES.jobFailed,
          nonRetryable: true,
          message: `step ${run.stepId} (${run.model}): ${message} (request ids ${run.attempts.map((a) => a.requestId).join(', ')})`,
          // Every request with the service's code and message, for the Temporal UI and scripts.
          details: [
            {
              step: run.stepId,
              attempts: run.attempts.map(({ attempt: number, requestId, outcome, serviceError }) => ({
                attempt: number,
                requestId,
                outcome,
                serviceError,
              })),
            },
          ],
        });
      }
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    const ended = await CancellationScope.nonCancellable(() => cancelStep(run));
    return end(run, ended);
  }
}

function end(run: StepRun, outcome: StepEnd): StepEnd {
  run.row.phase = 'done';
  run.row.finishedAt = Date.now();
  recordOutcome(run, outcome);
  return outcome;
}

/** Stops the step before any spend when its quote exceeds what the budget has left. */
async function checkBudget(run: StepRun, remaining: number): Promise<void> {
  run.row.phase = 'quoting';
  const credits = await run.quote.ask();
  if (credits <= remaining) return;
  const reason = `quote of ${credits} credits exceeds the remaining budget of ${remaining}`;
  run.row.error = reason;
  recordOutcome(run, 'budget-exceeded');
  throw ApplicationFailure.create({
    type: FAILURE_TYPES.budgetExceeded,
    nonRetryable: true,
    message: `step ${run.stepId}: ${reason}; nothing was submitted`,
    details: [{ quote: credits, remaining }],
  });
}
