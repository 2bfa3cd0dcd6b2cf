import { CancellationScope } from '@temporalio/workflow';
import type { StepAttempt } from '../pipeline-types';
import { stopJob } from './cancel';
import type { StepRun } from './step-run';

/** The message of a failure (activity failures carry the service's reason in their cause). */
export function reasonOf(error: unknown): string {
  let current: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    if (current.message && !/^Activity task failed$/.test(current.message)) message = current.message;
    current = current.cause;
  }
  return message;
}

/**
 * A failure came after the service accepted `attempt` (a poll answered 401, a status or result that
 * breaks the contract, a 202 body that does): the paid job must not run on unnoticed. It is
 * cancelled through its `cancel_url` and its terminal state awaited, as a pipeline cancel does;
 * where that cannot be done (no request id, the cancel or the wait fails too) it is recorded as
 * `abandoned` in the pipeline's recovery record, so the summary and `reelflow orphans` show it.
 */
export async function cancelOrAbandon(run: StepRun, attempt: StepAttempt, reason: string): Promise<void> {
  let why = reason;
  const requestId = attempt.requestId;
  if (requestId && !attempt.outcome) {
    try {
      await CancellationScope.nonCancellable(() => stopJob(run, attempt));
      attempt.error = `${reason}; the job was cancelled at the service (${attempt.outcome ?? 'state unknown'})`;
      run.changed();
      return;
    } catch (error) {
      why = `${reason}; cancelling it failed too: ${reasonOf(error)}`;
    }
  }
  if (!requestId) why = `${reason}; its request id could not be read, so it cannot be cancelled`;
  // Billed unless refunded: the ledger keeps the quoted charge of an accepted job.
  if (attempt.charged === 0) await run.quote.chargeOf(attempt).catch(() => undefined);
  attempt.abandoned = true;
  attempt.error = `abandoned: ${why}`;
  run.recovery.abandoned.push({
    step: run.stepId,
    ...(requestId ? { requestId } : {}),
    idempotencyKey: attempt.idempotencyKey,
    reason: why,
    at: new Date().toISOString(),
  });
  run.changed();
}
