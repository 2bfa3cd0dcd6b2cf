import { isTerminalState, type JobState } from '../../contract/limits';
import { CANCEL_POLL_PACING } from '../../spec/pacing';
import { ACTIVITY_SUMMARIES } from '../../spec/ui-text';
import { apiWith } from './proxies';
import { settle } from './settle';
import type { StepAttempt } from '../pipeline-types';
import { currentAttempt, type StepEnd, type StepRun } from './step-run';
import { awaitTerminal } from './wait';

/**
 * The pipeline was cancelled during this step: stop the paid job through its `cancel_url`, wait for
 * its terminal state, settle it. Run inside a non-cancellable scope. A job that completed before
 * the cancel reached it is `completed-too-late`, with its output.
 */
export async function cancelStep(run: StepRun): Promise<StepEnd> {
  const attempt = currentAttempt(run);
  if (!attempt?.requestId) return 'cancelled';
  if (attempt.outcome) {
    // Cancelled after the outcome was known (e.g. while fetching the result): finish reporting it.
    if (attempt.outcome === 'COMPLETED' && !run.row.output) await settle(run, attempt, 'COMPLETED');
    return attempt.outcome === 'COMPLETED' ? 'completed-too-late' : 'cancelled';
  }
  const terminal = await stopJob(run, attempt);
  return terminal === 'COMPLETED' ? 'completed-too-late' : 'cancelled';
}

/**
 * Cancels `attempt`'s job through its `cancel_url`, waits for its terminal state and settles it
 * (refund, or the result of a job that completed first). Used by a cancelled step and by a step
 * that must not abandon its accepted job (./abandon.ts).
 */
export async function stopJob(run: StepRun, attempt: StepAttempt): Promise<JobState> {
  run.row.phase = 'cancelling';
  run.changed();
  const answer = await apiWith(ACTIVITY_SUMMARIES.cancel(run.stepId, attempt.requestId as string)).cancelJob(
    attempt.requestId as string,
    attempt.cancelUrl,
  );
  // A cancel that answers with a terminal state is how the attempt learned its outcome.
  if (isTerminalState(answer.status)) attempt.learnedBy = 'cancel';
  const terminal = isTerminalState(answer.status)
    ? answer.status
    : await awaitTerminal(run, attempt, CANCEL_POLL_PACING);
  await settle(run, attempt, terminal);
  return terminal;
}
