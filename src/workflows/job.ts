import {
  ApplicationFailure,
  CancellationScope,
  ActivityFailure,
  condition,
  isCancellation,
  metricMeter,
  patched,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../contract/failure-types';
import type { GenerationRequest, JobResult, JobState as ServiceJobState, WebhookEvent } from '../contract';
import { resultFromEvent, terminalStateOf } from '../contract/events';
import { isTerminalState } from '../contract/limits';
import { MODELS } from '../contract/model-metadata';
import type { ReelflowActivities } from '../activities';
import { CANCEL_POLL_PACING, pollDelaySeconds, resolvePacing, type PollPacing } from '../spec/pacing';
import { jobEventSignal, jobStateQuery } from './definitions';
import { terminalAfterCancel } from './steps/cancel';
import { resubmitBackoffSeconds } from './steps/run-step';
import { type JobAttempt, type JobOutcome, type JobState, type JobWorkflowInput } from './job-types';

export * from './job-types';

/** Idempotent calls: retried by Temporal with backoff (non-retryable failures stop at once). */
const api = proxyActivities<ReelflowActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * Patch id of the resubmit backoff (added after the first release). Workflows that were running on the
 * previous code have no marker in their history and keep resubmitting at once on replay; new ones wait.
 * See docs/safe-deploys.md. Remove the old branch only once no execution started before it is open.
 */
export const RESUBMIT_BACKOFF_PATCH = 'resubmit-backoff';

/**
 * Patch id of taking a completed job's result from its webhook event (added after the resubmit
 * backoff). Executions recorded before it fetched the result after every completion and keep doing so
 * on replay; new ones fetch only when the outcome came by poll or the event carried no whole result.
 */
export const RESULT_FROM_EVENT_PATCH = 'result-from-event';

/**
 * Patch id of quoting after the submit when the step has no budget (added after result-from-event).
 * Without a budget the quote only fills the ledger, so it runs beside the job instead of in front of
 * it: one activity and one service call (an ffprobe for per-second models) fewer per hand-off.
 * Executions recorded before it quote first on replay; steps with a budget always quote first.
 */
export const QUOTE_AFTER_SUBMIT_PATCH = 'quote-after-submit';

/**
 * Job outcomes and credits through the SDK's metric meter (exported by the runtime's Prometheus
 * endpoint; the SDK drops workflow metrics during replay, so each outcome counts once).
 */
function recordOutcome(state: JobState, phase: string): void {
  // Created here, not at module load: the meter exists only inside a workflow context, and this module is
  // also imported by tests and the CLI for its helpers.
  const ledger = ledgerOf(state);
  metricMeter
    .createCounter('reelflow_jobs', 'jobs', 'Job workflows finished, by model and outcome.')
    .add(1, { model: state.model, outcome: phase });
  if (ledger.charged > 0)
    metricMeter
      .createCounter('reelflow_credits_charged', 'credits', 'Credits charged by job workflows, by model.')
      .add(ledger.charged, { model: state.model });
  if (ledger.refunded > 0)
    metricMeter
      .createCounter('reelflow_credits_refunded', 'credits', 'Credits refunded to job workflows, by model.')
      .add(ledger.refunded, { model: state.model });
}

/** The terminal state an event reports, or null for an event that says nothing terminal. */
export function eventState(event: WebhookEvent): ServiceJobState | null {
  return terminalStateOf(event);
}

/** Idempotency-Key of a deliberate attempt: stable across activity retries, fresh per resubmit and per run. */
export function idempotencyKeyFor(workflowId: string, firstRunId: string, attempt: number): string {
  return `reelflow:${workflowId}:${firstRunId}:${attempt}`;
}

/**
 * LEGACY (runs only executions started before ONE_WORKFLOW_PATCH; new pipelines run their steps
 * inline, see ./steps). Its commands must not change.
 *
 * One pipeline step as service requests: quote and budget check (with a budget; without one the
 * quote runs beside the job), submit (Idempotency-Key), wait for the webhook with paced polling as
 * the fallback, take the result from the event or fetch it. FAILED jobs are refunded and
 * resubmitted only as the step's policy allows. On cancel the paid job is cancelled via its
 * `cancel_url` and its terminal state awaited; the outcome says cancelled or completed-too-late.
 */
export async function jobWorkflow(input: JobWorkflowInput): Promise<JobOutcome> {
  const info = workflowInfo();
  const pacing: PollPacing = resolvePacing(MODELS[input.model].expectedRunSeconds, input.pacing);
  const maxResubmits = input.maxResubmits ?? 0;
  const state: JobState = {
    workflowId: info.workflowId,
    pipeline: input.pipeline,
    step: input.step,
    model: input.model,
    phase: 'quoting',
    attempts: [],
    polls: 0,
    pollOffsetsSeconds: [],
    eventsReceived: 0,
    duplicateEvents: 0,
    ignoredEvents: 0,
  };
  /** First terminal event per request id; events are deduped on event_id. */
  const seenEventIds = new Set<string>();
  const terminalEvents = new Map<string, ServiceJobState>();
  /** Results carried by completed events, by request id (see RESULT_FROM_EVENT_PATCH). */
  const carriedResults = new Map<string, JobResult>();
  const current = (): JobAttempt | undefined => state.attempts[state.attempts.length - 1];

  setHandler(jobStateQuery, () => state);
  setHandler(jobEventSignal, (event) => {
    if (seenEventIds.has(event.event_id)) {
      state.duplicateEvents += 1;
      return;
    }
    seenEventIds.add(event.event_id);
    state.eventsReceived += 1;
    const terminal = eventState(event);
    const attempt = current();
    // Late events (an earlier attempt, a job already settled) and events for other requests change nothing.
    if (
      !terminal ||
      !attempt ||
      attempt.requestId !== event.request_id ||
      attempt.outcome ||
      terminalEvents.has(event.request_id)
    ) {
      state.ignoredEvents += 1;
      return;
    }
    terminalEvents.set(event.request_id, terminal);
    const carried = resultFromEvent(event);
    if (carried) carriedResults.set(event.request_id, carried);
  });

  const submitApi = proxyActivities<ReelflowActivities>({
    startToCloseTimeout: `${input.submitTimeoutSeconds ?? 120} seconds`,
    heartbeatTimeout: `${Math.min(30, input.submitTimeoutSeconds ?? 30)} seconds`,
    // Transport failures before the request reached the service are retried by the client; here a
    // retry mostly covers a worker that died mid-submit, which the Idempotency-Key makes safe.
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
  });

  const outcome = (phase: JobOutcome['phase']): JobOutcome => {
    state.phase = phase;
    recordOutcome(state, phase);
    return { ...state, phase, ledger: ledgerOf(state), requestIds: requestIdsOf(state) };
  };

  /** Waits for a terminal state of `attempt`: webhook first, paced polls as the fallback. */
  async function awaitTerminal(
    attempt: JobAttempt,
    request: GenerationRequest,
    schedule: PollPacing,
  ): Promise<ServiceJobState> {
    const since = Date.now();
    state.pollOffsetsSeconds = [];
    for (let k = 0; ; k += 1) {
      const requestId = attempt.requestId as string;
      const delayMs = pollDelaySeconds(schedule, k) * 1000;
      if (await condition(() => terminalEvents.has(requestId), delayMs)) {
        attempt.learnedBy = 'webhook';
        return terminalEvents.get(requestId) as ServiceJobState;
      }
      state.polls += 1;
      state.pollOffsetsSeconds.push((Date.now() - since) / 1000);
      const status = await api.pollJobStatus(requestId, request.status_url);
      if (isTerminalState(status.status)) {
        attempt.learnedBy = 'poll';
        return status.status;
      }
    }
  }

  async function settle(attempt: JobAttempt, request: GenerationRequest, terminal: ServiceJobState): Promise<void> {
    attempt.outcome = terminal;
    if (terminal === 'COMPLETED') {
      // The signed event already holds the result: one service call and one activity fewer per hand-off.
      const carried = attempt.learnedBy === 'webhook' ? carriedResults.get(attempt.requestId as string) : undefined;
      let result: JobResult;
      if (carried && patched(RESULT_FROM_EVENT_PATCH)) {
        result = carried;
        attempt.resultFrom = 'event';
      } else {
        state.phase = 'fetching-result';
        result = await api.fetchJobResult(attempt.requestId as string, request.response_url);
        attempt.resultFrom = 'fetch';
      }
      state.result = result;
      if (result.credits_used !== null) attempt.charged = result.credits_used;
    } else {
      // The service refunds FAILED and CANCELLED jobs automatically.
      attempt.refunded = attempt.charged;
    }
  }

  /** The quote, asked once (never cancelled half-way: the ledger needs it even when the job is cancelled). */
  let quoting: Promise<number> | undefined;
  const quoteCredits = (): Promise<number> =>
    (quoting ??= CancellationScope.nonCancellable(() => api.quoteJob(input.model, input.input)).then((quote) => {
      state.quote = quote.credits;
      return quote.credits;
    }));
  /** What a submitted attempt was charged: the quote (the service charges the quoted price on submit). */
  async function chargeOf(attempt: JobAttempt): Promise<void> {
    try {
      attempt.charged = await quoteCredits();
    } catch (error) {
      // Quoted after the submit and the quote failed: the job runs on; a long-form result's credits_used fills the charge.
      state.quoteError =
        error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    }
  }

  let request: GenerationRequest | undefined;
  try {
    const quoteFirst = input.budgetRemaining !== undefined || !patched(QUOTE_AFTER_SUBMIT_PATCH);
    if (quoteFirst) await quoteCredits();
    else state.phase = 'submitting';
    for (let n = 1; ; n += 1) {
      // Budget before any spend: a FAILED attempt was refunded, so the remaining budget is unchanged.
      if (input.budgetRemaining !== undefined) {
        const credits = await quoteCredits();
        if (credits > input.budgetRemaining) {
          state.phase = 'budget-exceeded';
          state.error = `quote of ${credits} credits exceeds the remaining budget of ${input.budgetRemaining}`;
          recordOutcome(state, state.phase);
          throw ApplicationFailure.create({
            type: FAILURE_TYPES.budgetExceeded,
            nonRetryable: true,
            message: `step ${input.step}: ${state.error}; nothing was submitted`,
            details: [{ quote: credits, remaining: input.budgetRemaining, state }],
          });
        }
      }
      // Versioned change: back off before a resubmit (a job that just failed often fails again at once).
      // The old path (no wait) stays for executions whose history was written without the patch.
      if (n > 1 && patched(RESUBMIT_BACKOFF_PATCH)) {
        await sleep(`${resubmitBackoffSeconds(n - 1)} seconds`);
      }
      const attempt: JobAttempt = {
        attempt: n,
        idempotencyKey: idempotencyKeyFor(info.workflowId, info.firstExecutionRunId, n),
        charged: 0,
        refunded: 0,
      };
      state.attempts.push(attempt);
      state.phase = 'submitting';
      // Never abandon a submit half-way: once it may have reached the service, learn the request id.
      request = await CancellationScope.nonCancellable(() =>
        submitApi.submitJob(input.model, input.input, attempt.idempotencyKey),
      ).catch((error: unknown) => {
        throw ambiguityOrSame(error, attempt, input.step, state);
      });
      attempt.requestId = request.request_id;
      attempt.cancelUrl = request.cancel_url;
      state.phase = 'waiting';
      if (quoteFirst) {
        await chargeOf(attempt);
        await api.subscribeToWebhook(request.request_id, info.workflowId);
      } else {
        // Quote and subscription side by side while the job runs.
        await Promise.all([chargeOf(attempt), api.subscribeToWebhook(request.request_id, info.workflowId)]);
      }
      const terminal = await awaitTerminal(attempt, request, pacing);
      await settle(attempt, request, terminal);
      if (terminal === 'COMPLETED') return outcome('completed');
      if (terminal === 'CANCELLED') {
        // Cancelled at the service by someone else: the step is over, refunded.
        return outcome('cancelled');
      }
      attempt.error = 'the service reported FAILED (refunded)';
      if (n > maxResubmits) {
        state.phase = 'failed';
        state.error = `failed ${n} time(s); policy allows ${maxResubmits} resubmit(s); every attempt was refunded`;
        recordOutcome(state, state.phase);
        throw ApplicationFailure.create({
          type: FAILURE_TYPES.jobFailed,
          nonRetryable: true,
          message: `step ${input.step} (${input.model}): ${state.error} (request ids ${state.attempts.map((a) => a.requestId).join(', ')})`,
          details: [{ ...state, ledger: ledgerOf(state), requestIds: requestIdsOf(state) }],
        });
      }
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    return CancellationScope.nonCancellable(() => cancelInFlight(request));
  }

  /** The workflow was cancelled: stop the paid job, wait for its terminal state, report it. */
  async function cancelInFlight(inFlight: GenerationRequest | undefined): Promise<JobOutcome> {
    const attempt = current();
    if (!inFlight || !attempt || !attempt.requestId) return outcome('cancelled');
    if (attempt.outcome) {
      // Cancelled after the outcome was known (e.g. while fetching the result): finish reporting it.
      if (attempt.outcome === 'COMPLETED' && !state.result) await settle(attempt, inFlight, 'COMPLETED');
      return outcome(attempt.outcome === 'COMPLETED' ? 'completed-too-late' : 'cancelled');
    }
    state.phase = 'cancelling';
    const answer = await api.cancelJob(attempt.requestId, inFlight.cancel_url);
    const terminal = await terminalAfterCancel(answer, attempt, () =>
      awaitTerminal(attempt, inFlight, CANCEL_POLL_PACING),
    );
    // Cancelled while quoting beside the job: the refund is the charge, so learn it first.
    await chargeOf(attempt);
    await settle(attempt, inFlight, terminal);
    return outcome(terminal === 'COMPLETED' ? 'completed-too-late' : 'cancelled');
  }
}

/** Credits of a job: quoted once, charged and refunded summed over attempts. */
export function ledgerOf(state: JobState): JobOutcome['ledger'] {
  return {
    quoted: state.quote ?? 0,
    charged: state.attempts.reduce((sum, a) => sum + a.charged, 0),
    refunded: state.attempts.reduce((sum, a) => sum + a.refunded, 0),
  };
}

function requestIdsOf(state: JobState): string[] {
  return state.attempts.flatMap((a) => (a.requestId ? [a.requestId] : []));
}

/** A submit that may have created a job surfaces as its own non-retryable type, naming what to check. */
function ambiguityOrSame(error: unknown, attempt: JobAttempt, step: string, state: JobState): unknown {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  if (cause instanceof ApplicationFailure && cause.type === FAILURE_TYPES.ambiguousSubmission) {
    state.phase = 'ambiguous-submission';
    state.error =
      `the submit of step ${step} may have created a job (no answer came back), so it was not retried; the request id is unknown. ` +
      `Check the service's job list for Idempotency-Key ${attempt.idempotencyKey} (resubmitting with that key returns the original job)`;
    return ApplicationFailure.create({
      type: FAILURE_TYPES.ambiguousSubmission,
      nonRetryable: true,
      message: state.error,
      details: [{ idempotencyKey: attempt.idempotencyKey, step, state }],
    });
  }
  return error;
}
