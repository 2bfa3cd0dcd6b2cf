import { CancellationScope, condition } from '@temporalio/workflow';
import type { JobState } from '../../../contract';
import { isTerminalState } from '../../../contract/limits';
import { earlyCheckDelaySeconds, pollDelaySeconds, type PollPacing } from '../../../pipeline-spec/pacing';
import { ACTIVITY_SUMMARIES, TIMER_SUMMARIES } from '../../../pipeline-spec/ui-text';
import type { StepAttempt } from '../../pipeline-types';
import { serviceErrorOf, type TerminalEvent } from './job-event-buffer';
import { apiWith, permitRelease } from './proxies';
import { StartDeadlinePassed } from './errors';
import type { JobHandle } from './types';

/**
 * Waits for a terminal state of `attempt`: the webhook first, paced status polls as the fallback.
 * With a start deadline (workflow time, ms): a wait that would pass it while the job was never seen
 * started wakes at it for one status read, and throws StartDeadlinePassed when the job is still IN_QUEUE.
 */
export async function waitForOutcome(
  job: JobHandle,
  attempt: StepAttempt,
  pacing: PollPacing,
  startDeadline?: { at: number; seconds: number },
): Promise<JobState> {
  const requestId = attempt.requestId as string;
  const since = Date.now();
  job.set({ pollOffsetsSeconds: [] });
  const arrived = () => job.jobs.events.terminalOf(requestId) !== undefined;
  let lastSeen: JobState | undefined;
  /** Waits up to `delayMs` for the webhook (true when it came); `condition` reads a 0 timeout as none. */
  const webhookWithin = async (delayMs: number): Promise<boolean> => {
    if (delayMs <= 0) return arrived();
    return condition(arrived, delayMs, { summary: TIMER_SUMMARIES.webhook(requestId, delayMs / 1000) });
  };
  const fromWebhook = (): JobState => {
    attempt.learnedBy = 'webhook';
    return (job.jobs.events.terminalOf(requestId) as TerminalEvent).state;
  };
  /** Waits up to `delayMs` for the webhook, then polls once; the terminal state, or null to go on. */
  const waitThenPoll = async (delayMs: number): Promise<JobState | null> => {
    const dueAt = Date.now() + delayMs;
    job.set({ nextPollAt: dueAt });
    const unstarted = lastSeen === undefined || lastSeen === 'IN_QUEUE';
    if (startDeadline && unstarted && startDeadline.at < dueAt) {
      // The start deadline comes first: one read at it says whether the job left the queue.
      if (await webhookWithin(startDeadline.at - Date.now())) return fromWebhook();
      const state = await poll();
      if (state === 'IN_QUEUE') throw new StartDeadlinePassed(startDeadline.seconds);
      if (isTerminalState(state)) return state;
    }
    if (await webhookWithin(dueAt - Date.now())) return fromWebhook();
    const state = await poll();
    return isTerminalState(state) ? state : null;
  };
  /** One status read: counted, and a terminal state's reason kept. */
  const poll = async (): Promise<JobState> => {
    const offset = (Date.now() - since) / 1000;
    const status = await apiWith(ACTIVITY_SUMMARIES.poll(job.label, requestId)).pollJobStatus(
      requestId,
      attempt.statusUrl,
    );
    // A poll that finds the state it found before is no change.
    job.polled(offset, status.status !== lastSeen);
    lastSeen = status.status;
    if (!isTerminalState(status.status)) return status.status;
    attempt.learnedBy = 'poll';
    const reason = serviceErrorOf(status.error);
    if (reason) attempt.serviceError = reason;
    return status.status;
  };
  try {
    const early = earlyCheckDelaySeconds(pacing);
    // Poll -1 is the early check; it counts towards the first paced poll's delay (the documented schedule).
    for (let k = early === null ? 0 : -1; ; k += 1) {
      const delay = k < 0 ? (early as number) : pollDelaySeconds(pacing, k) - (k === 0 ? (early ?? 0) : 0);
      const terminal = await waitThenPoll(delay * 1000);
      if (terminal) return terminal;
    }
  } finally {
    job.set({ nextPollAt: undefined });
  }
}

/**
 * Records the terminal state of `attempt`: a COMPLETED job's result (from its webhook event, else
 * fetched) and charge (its `credits_used`, else the quote); a FAILED or CANCELLED job's refund and reason.
 */
export async function settle(job: JobHandle, attempt: StepAttempt, terminal: JobState): Promise<void> {
  attempt.outcome = terminal;
  // The job is no longer in flight at the service: its permit goes back before anything else.
  await releasePermit(attempt);
  job.set({ lastChangeAt: Date.now() });
  if (terminal !== 'COMPLETED') {
    // The service charged the price on submit and refunded it: both are the step's price.
    await job.chargeQuote(attempt);
    attempt.refunded = attempt.charged;
    const reason = attempt.serviceError ?? job.jobs.events.terminalOf(attempt.requestId as string)?.error;
    if (reason) attempt.serviceError = reason;
    return;
  }
  const requestId = attempt.requestId as string;
  const carried = attempt.learnedBy === 'webhook' ? job.jobs.events.terminalOf(requestId)?.result : undefined;
  if (!carried) job.set({ phase: 'fetching-result' });
  const fetchResult = () =>
    apiWith(ACTIVITY_SUMMARIES.result(job.label, requestId)).fetchJobResult(requestId, attempt.responseUrl);
  const result = carried ?? (await fetchResult());
  attempt.resultFrom = carried ? 'event' : 'fetch';
  job.set({ output: result });
  if (result.credits_used !== null) attempt.charged = result.credits_used;
  else if (job.quoted !== undefined) attempt.charged = job.quoted;
  // No charge in the result and no price yet: the ledger's quote runs beside what follows.
  else job.jobs.charges.push(job.chargeQuote(attempt).then(() => job.changed()));
}

/** Gives `attempt`'s permit back once its job is terminal (or was never created); nothing when it holds none. */
export async function releasePermit(attempt: StepAttempt): Promise<void> {
  if (!attempt.permit) return;
  delete attempt.permit;
  await CancellationScope.nonCancellable(() => permitRelease.releaseAccountPermit(attempt.idempotencyKey));
}
