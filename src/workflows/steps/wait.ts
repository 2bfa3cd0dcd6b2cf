import { condition } from '@temporalio/workflow';
import { isTerminalState, type JobState as ServiceJobState } from '../../contract/limits';
import { pollDelaySeconds, type PollPacing } from '../../pipeline/pacing';
import type { StepAttempt } from '../pipeline-types';
import { ACTIVITY_SUMMARIES, TIMER_SUMMARIES } from '../ui-text';
import { apiWith } from './proxies';
import type { StepRun } from './step-run';

/**
 * Waits for a terminal state of `attempt`: the webhook first, paced status polls as the fallback
 * (a healthy webhook path costs zero polls).
 */
export async function awaitTerminal(run: StepRun, attempt: StepAttempt, pacing: PollPacing): Promise<ServiceJobState> {
  const requestId = attempt.requestId as string;
  const since = Date.now();
  run.row.pollOffsetsSeconds = [];
  for (let k = 0; ; k += 1) {
    const delayMs = pollDelaySeconds(pacing, k) * 1000;
    if (await condition(() => run.inbox.terminalOf(requestId) !== undefined, delayMs, { summary: TIMER_SUMMARIES.webhook(requestId, delayMs / 1000) })) {
      attempt.learnedBy = 'webhook';
      return run.inbox.terminalOf(requestId) as ServiceJobState;
    }
    run.row.polls += 1;
    run.row.pollOffsetsSeconds.push((Date.now() - since) / 1000);
    const status = await apiWith(ACTIVITY_SUMMARIES.poll(run.stepId, requestId)).pollJobStatus(requestId, attempt.statusUrl);
    if (isTerminalState(status.status)) {
      attempt.learnedBy = 'poll';
      return status.status;
    }
  }
}
