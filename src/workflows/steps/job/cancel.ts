import { CancellationScope } from '@temporalio/workflow';
import { isTerminalState, type JobState } from '../../../contract/limits';
import { CANCEL_POLL_PACING } from '../../../pipeline-spec/pacing';
import { ACTIVITY_SUMMARIES } from '../../../pipeline-spec/ui-text';
import type { StepAttempt } from '../../pipeline-types';
import { settle, waitForOutcome } from './outcome';
import { apiWith } from './proxies';
import type { JobHandle } from './types';

/** The caller was cancelled during the job: stop and settle it; one that completed first is `completed-too-late`. */
export async function cancelStep(job: JobHandle): Promise<'cancelled' | 'completed-too-late'> {
  const attempt = job.attempts.at(-1);
  if (!attempt?.requestId) return 'cancelled';
  // Cancelled after the outcome was known (e.g. while fetching the result): finish reporting it.
  if (attempt.outcome === 'COMPLETED' && !job.view().output) await settle(job, attempt, 'COMPLETED');
  const terminal = attempt.outcome ?? (await stopJob(job, attempt));
  return terminal === 'COMPLETED' ? 'completed-too-late' : 'cancelled';
}

/** Cancels `attempt`'s job through its `cancel_url`, waits for its terminal state and settles it. */
export async function stopJob(job: JobHandle, attempt: StepAttempt): Promise<JobState> {
  job.set({ phase: 'cancelling' });
  const answer = await apiWith(ACTIVITY_SUMMARIES.cancel(job.label, attempt.requestId as string)).cancelJob(
    attempt.requestId as string,
    attempt.cancelUrl,
  );
  // A cancel that answers with a terminal state is how the attempt learned its outcome.
  if (isTerminalState(answer.status)) attempt.learnedBy = 'cancel';
  const terminal = isTerminalState(answer.status)
    ? answer.status
    : await waitForOutcome(job, attempt, CANCEL_POLL_PACING);
  await settle(job, attempt, terminal);
  return terminal;
}

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
 * A failure came after the service accepted `attempt`: the paid job must not run on unnoticed. It is
 * cancelled, or else recorded as `abandoned` in the recovery record (`reelflow orphans`).
 */
export async function cancelOrAbandon(job: JobHandle, attempt: StepAttempt, reason: string): Promise<void> {
  let why = reason;
  const requestId = attempt.requestId;
  if (requestId && !attempt.outcome) {
    try {
      await CancellationScope.nonCancellable(() => stopJob(job, attempt));
      attempt.error = `${reason}; the job was cancelled at the service (${attempt.outcome ?? 'state unknown'})`;
      job.changed();
      return;
    } catch (error) {
      why = `${reason}; cancelling it failed too: ${reasonOf(error)}`;
    }
  }
  if (!requestId) why = `${reason}; its request id could not be read, so it cannot be cancelled`;
  // Billed unless refunded: the ledger keeps the quoted charge of an accepted job.
  if (attempt.charged === 0) await job.chargeQuote(attempt).catch(() => undefined);
  attempt.abandoned = true;
  attempt.error = `abandoned: ${why}`;
  job.jobs.recovery.abandoned.push({
    step: job.label,
    ...(requestId ? { requestId } : {}),
    idempotencyKey: attempt.idempotencyKey,
    reason: why,
    at: new Date().toISOString(),
  });
  job.changed();
}

/** What `cancelUnstarted` reports when its cancel ended the job: it never started, and was refunded. */
export const MISSED_START = 'missed-start';

/**
 * Cancels `attempt`'s job, still IN_QUEUE at its start deadline, and settles it: `missed-start` when the
 * cancel ended it (refunded); the terminal state it reached first otherwise (it started in between).
 */
export async function cancelUnstarted(
  job: JobHandle,
  attempt: StepAttempt,
  seconds: number,
): Promise<JobState | typeof MISSED_START> {
  const terminal = await stopJob(job, attempt);
  if (terminal !== 'CANCELLED') return terminal;
  attempt.error = `not started within ${seconds} s (still IN_QUEUE): cancelled before it started (refunded)`;
  job.changed();
  return MISSED_START;
}
