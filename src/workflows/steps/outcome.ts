import { CancellationScope, condition } from '@temporalio/workflow';
import type { JobResult, JobState, WebhookEvent } from '../../contract';
import { resultFromEvent, terminalStateOf } from '../../contract/events';
import { isTerminalState } from '../../contract/limits';
import { earlyCheckDelaySeconds, pollDelaySeconds, type PollPacing } from '../../spec/pacing';
import { ACTIVITY_SUMMARIES, TIMER_SUMMARIES } from '../../spec/ui-text';
import type { EventCounts, ServiceError, StepAttempt } from '../pipeline-types';
import { apiWith, permitRelease } from './proxies';
import type { ServiceJob } from './service-job';

/** A request's first terminal event: its state, and the whole result or the reason it carried. */
export interface TerminalEvent {
  state: JobState;
  result?: JobResult;
  error?: ServiceError;
}

/**
 * Webhook events a workflow received, by request id. Deduped on `event_id`; the first terminal event
 * of a request wins. Events for a request not known yet are kept: an event can overtake its submit's answer.
 */
export class Inbox {
  private readonly seen = new Set<string>();
  private readonly terminal = new Map<string, TerminalEvent>();
  private received = 0;
  private duplicates = 0;
  /** Distinct events that said nothing new: not terminal, or a second terminal event for a request. */
  private unused = 0;

  accept(event: WebhookEvent): void {
    if (this.seen.has(event.event_id)) {
      this.duplicates += 1;
      return;
    }
    this.seen.add(event.event_id);
    this.received += 1;
    const state = terminalStateOf(event);
    if (!state || this.terminal.has(event.request_id)) {
      this.unused += 1;
      return;
    }
    this.terminal.set(event.request_id, { state, result: resultFromEvent(event), error: serviceErrorOf(event.error) });
  }

  /** The terminal event a webhook reported for `requestId`, if any. */
  terminalOf(requestId: string): TerminalEvent | undefined {
    return this.terminal.get(requestId);
  }

  /** Counts; events for requests outside `requestIds` (the pipeline's own) count as ignored. */
  counts(requestIds: readonly string[]): EventCounts {
    const own = new Set(requestIds);
    const strangers = [...this.terminal.keys()].filter((id) => !own.has(id)).length;
    return { received: this.received, duplicates: this.duplicates, ignored: this.unused + strangers };
  }
}

/** `{code, message}` from an event's or a status answer's `error`, when it has that shape. */
export function serviceErrorOf(error: unknown): ServiceError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string') return undefined;
  return { code, message };
}

/** Waits for a terminal state of `attempt`: the webhook first, paced status polls as the fallback. */
export async function waitForOutcome(job: ServiceJob, attempt: StepAttempt, pacing: PollPacing): Promise<JobState> {
  const requestId = attempt.requestId as string;
  const since = Date.now();
  job.set({ pollOffsetsSeconds: [] });
  const arrived = () => job.jobs.inbox.terminalOf(requestId) !== undefined;
  let lastSeen: JobState | undefined;
  /** Waits up to `delayMs` for the webhook, then polls once; the terminal state, or null to go on. */
  const waitThenPoll = async (delayMs: number): Promise<JobState | null> => {
    job.set({ nextPollAt: Date.now() + delayMs });
    if (await condition(arrived, delayMs, { summary: TIMER_SUMMARIES.webhook(requestId, delayMs / 1000) })) {
      attempt.learnedBy = 'webhook';
      return (job.jobs.inbox.terminalOf(requestId) as TerminalEvent).state;
    }
    const offset = (Date.now() - since) / 1000;
    const status = await apiWith(ACTIVITY_SUMMARIES.poll(job.label, requestId)).pollJobStatus(
      requestId,
      attempt.statusUrl,
    );
    // A poll that finds the state it found before is no change.
    job.polled(offset, status.status !== lastSeen);
    lastSeen = status.status;
    if (!isTerminalState(status.status)) return null;
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
export async function settle(job: ServiceJob, attempt: StepAttempt, terminal: JobState): Promise<void> {
  attempt.outcome = terminal;
  // The job is no longer in flight at the service: its permit goes back before anything else.
  await releasePermit(attempt);
  job.set({ lastChangeAt: Date.now() });
  if (terminal !== 'COMPLETED') {
    // The service charged the price on submit and refunded it: both are the step's price.
    await job.chargeQuote(attempt);
    attempt.refunded = attempt.charged;
    const reason = attempt.serviceError ?? job.jobs.inbox.terminalOf(attempt.requestId as string)?.error;
    if (reason) attempt.serviceError = reason;
    return;
  }
  const requestId = attempt.requestId as string;
  const carried = attempt.learnedBy === 'webhook' ? job.jobs.inbox.terminalOf(requestId)?.result : undefined;
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
