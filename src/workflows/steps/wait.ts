import { condition } from '@temporalio/workflow';
import { isTerminalState, type JobState } from '../../contract/limits';
import { earlyCheckDelaySeconds, pollDelaySeconds, type PollPacing } from '../../spec/pacing';
import type { StepAttempt } from '../pipeline-types';
import { serviceErrorOf } from './inbox';
import { ACTIVITY_SUMMARIES, TIMER_SUMMARIES } from '../../spec/ui-text';
import { apiWith } from './proxies';
import type { StepRun } from './step-run';

/**
 * Waits for a terminal state of `attempt`: the webhook first, paced status polls as the fallback
 * (a healthy webhook path costs zero polls), after one early status check when the pacing asks for
 * it. The row shows when the next poll is due; a FAILED status keeps the service's reason.
 */
export async function awaitTerminal(run: StepRun, attempt: StepAttempt, pacing: PollPacing): Promise<JobState> {
  const requestId = attempt.requestId as string;
  const since = Date.now();
  run.row.pollOffsetsSeconds = [];
  const arrived = () => run.inbox.terminalOf(requestId) !== undefined;
  let lastSeen: JobState | undefined;
  /** Waits up to `delayMs` for the webhook, then polls once; the terminal state, or null to go on. */
  const waitThenPoll = async (delayMs: number): Promise<JobState | null> => {
    run.row.nextPollAt = Date.now() + delayMs;
    if (await condition(arrived, delayMs, { summary: TIMER_SUMMARIES.webhook(requestId, delayMs / 1000) })) {
      attempt.learnedBy = 'webhook';
      return run.inbox.terminalOf(requestId) as JobState;
    }
    run.row.polls += 1;
    run.row.pollOffsetsSeconds?.push((Date.now() - since) / 1000);
    const status = await apiWith(ACTIVITY_SUMMARIES.poll(run.stepId, requestId)).pollJobStatus(
      requestId,
      attempt.statusUrl,
    );
    // A poll that finds the state it found before is no change.
    if (status.status !== lastSeen) run.row.lastChangeAt = Date.now();
    lastSeen = status.status;
    if (!isTerminalState(status.status)) return null;
    attempt.learnedBy = 'poll';
    const reason = serviceErrorOf(status.error);
    if (reason) attempt.serviceError = reason;
    return status.status;
  };
  try {
    const early = earlyCheckDelaySeconds(pacing);
    let spent = 0;
    if (early !== null) {
      const terminal = await waitThenPoll(early * 1000);
      if (terminal) return terminal;
      spent = early;
    }
    for (let k = 0; ; k += 1) {
      // The early check counts towards the first paced poll's delay: the schedule stays as documented.
      const terminal = await waitThenPoll((pollDelaySeconds(pacing, k) - (k === 0 ? spent : 0)) * 1000);
      if (terminal) return terminal;
    }
  } finally {
    delete run.row.nextPollAt;
  }
}
