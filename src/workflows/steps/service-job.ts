import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  metricMeter,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { PreparedChain, PreparedSubmission, SubmitAs } from '../../activities';
import type { GenerationRequest, JobResult, JobState, ModelId, ModelInputs, WebhookEvent } from '../../contract';
import { FAILURE_TYPES } from '../../contract/failure-types';
import { MODELS } from '../../contract/model-metadata';
import { resolvePacing, type PollPacing } from '../../spec/pacing';
import { ACTIVITY_SUMMARIES, TIMER_SUMMARIES } from '../../spec/ui-text';
import { preparedJobEventSignal, resolveAmbiguousUpdate, stepEventSignal } from '../definitions';
import { workflowFailure } from '../errors';
import { validateResolution } from '../operator-updates';
import type { StepAttempt, StepSummary } from '../pipeline-types';
import { awaitDecision, type RecoveryState } from './ambiguous';
import { cancelOrAbandon, cancelStep, reasonOf } from './cancel';
import { Inbox, releasePermit, settle, waitForOutcome } from './outcome';
import { apiWith, permitActivities, preparedRevoke, submitActivities } from './proxies';

/** What the jobs of one workflow share: their webhook events, the recovery record, the ledger quotes still running. */
export interface WorkflowJobs {
  inbox: Inbox;
  recovery: RecoveryState;
  charges: Promise<void>[];
  /** Jobs the bridge submitted with this workflow's prepared keys, by Idempotency-Key, until a submit adopts them. */
  submittedAhead: Map<string, PreparedSubmission>;
  /** Request ids whose subscription carries a prepared submit, with that submit's key, until this workflow submits that key. */
  preparedBehind: Map<string, string>;
}

let shared: WorkflowJobs | undefined;

/**
 * This workflow's jobs' shared state; the first call registers the `jobEvent` signal and the
 * `resolveAmbiguousStep` update (before the first await: an event may overtake its submit's answer).
 */
export function workflowJobs(): WorkflowJobs {
  if (shared) return shared;
  const jobs: WorkflowJobs = (shared = {
    inbox: new Inbox(),
    recovery: { abandoned: [], ambiguous: [] },
    charges: [],
    submittedAhead: new Map(),
    preparedBehind: new Map(),
  });
  setHandler(stepEventSignal, (event) => jobs.inbox.accept(event));
  setHandler(preparedJobEventSignal, (event, next) => {
    jobs.submittedAhead.set(next.idempotencyKey, next);
    if (next.nextKey) jobs.preparedBehind.set(next.request.request_id, next.nextKey);
    jobs.inbox.accept(event);
  });
  setHandler(
    resolveAmbiguousUpdate,
    (decision) => {
      const { step, idempotencyKey } = jobs.recovery.waiting as NonNullable<RecoveryState['waiting']>;
      jobs.recovery.decision = decision;
      const { action, requestId } = decision;
      return { step, action, idempotencyKey, ...(requestId ? { requestId } : {}) };
    },
    { validator: (decision) => validateResolution(jobs.recovery.waiting, decision) },
  );
  return jobs;
}

/**
 * Revokes the submits prepared behind this workflow's jobs that it will not submit (it ends early): a
 * job the bridge submitted already is cancelled at the service (refunded). No activity when none is left.
 */
export async function revokePreparedSubmits(): Promise<void> {
  const { preparedBehind } = workflowJobs();
  if (preparedBehind.size === 0) return;
  const requestIds = [...preparedBehind.keys()];
  preparedBehind.clear();
  await CancellationScope.nonCancellable(() => preparedRevoke.revokePreparedSubmits(requestIds));
}

/** Resolves once the ledger quotes running beside later steps answered (or failed: the charge stays unknown). */
export async function chargesSettled(): Promise<void> {
  const { charges } = workflowJobs();
  while (charges.length) await Promise.all(charges.splice(0));
}

// Module state is per workflow execution: the jobs this run started, for their default keys.
let jobsStarted = 0;

/**
 * Runs one paid job of the service inside the calling workflow: submit exactly once per attempt
 * (Idempotency-Key, its answer awaited even under a cancel), the signed webhook awaited with paced
 * status polls as the fallback, the credits (`credits_used`, else the quote), FAILED jobs resubmitted
 * as `maxResubmits` allows. Cancelling the caller's scope cancels the job and awaits its refund.
 *
 * Resolves with the job's outcome; throws an `ApplicationFailure` whose type says why the job failed:
 * `JobFailed` (the service's own code and message), `BudgetExceeded`, `AmbiguousSubmission`,
 * `SubmitAnswerInvalid`, or the `ServiceProblem:<code>` the service answered the submit with. The
 * worker runs reelflow's activities (`reelflowPlugin()`); each call without a `key` is its own job.
 *
 * @param model the service's model id
 * @param input the model's input (docs/service-api.md); checked by the service at submit
 * @example
 * const outcome = await runServiceJob(UPSCALE_MODEL, { video_url });
 * if (outcome.status !== 'cancelled') console.log(outcome.result.videos[0]?.url);
 */
export function runServiceJob<M extends ModelId>(
  model: M,
  input: ModelInputs[M],
  options: ServiceJobOptions = {},
): Promise<ServiceJobOutcome> {
  return new ServiceJob(model, input as Record<string, unknown>, options).run();
}

/** Options of `runServiceJob` and the step functions (reelflow/workflows); every one has a default fit for a workflow that runs one job. */
export interface ServiceJobOptions {
  /** Stem of the job's Idempotency-Keys, unique per job (default `<workflow id>/<run id>/job/<n>-<model>`). */
  key?: string;
  /** The job's name in the Temporal UI's summaries and in failures (default the model). */
  label?: string;
  /** Fallback poll pacing (default: from the model's expected run time). */
  pacing?: Partial<PollPacing>;
  /** FAILED jobs resubmitted (after a backoff, with a fresh key) before the job fails (default 0). */
  maxResubmits?: number;
  /** Credits the job may still spend, read before each submit; absent: no budget check and no quote before it. */
  budgetRemaining?: () => number | undefined;
  submitTimeoutSeconds?: number;
  /** How the submit runs (default `activity`; `local-activity` only where the service honours Idempotency-Key: SubmitAs). */
  submitAs?: SubmitAs;
  /** How long an ambiguous submit waits for an operator decision, hours (default 24). */
  ambiguousDeadlineHours?: number;
  /** @internal reelflow's pipeline hook: told at the start and on every change of the job's state. */
  observe?: (job: ServiceJob) => void;
  /**
   * @internal reelflow's pipeline hook: the steps after this job the bridge may submit when it completes
   * (the activity writes them only where that is safe: SubmitRequest.prepareNext).
   */
  prepareNext?: PreparedChain;
  /** @internal reelflow's pipeline hook: true once an operator asked to end a resubmit backoff now (`retryStep`). */
  wakeBackoff?: () => boolean;
}

/** Credits of a job over all its attempts. */
export interface JobCredits {
  quoted?: number;
  charged: number;
  refunded: number;
}

/**
 * How a job ended when it did not fail (a failed job throws): `completed`; `cancelled` (refunded);
 * `completed-too-late` (cancelled after the job completed: its result is kept and paid).
 */
export type ServiceJobOutcome =
  | { status: 'completed' | 'completed-too-late'; requestId: string; result: JobResult; credits: JobCredits }
  | { status: 'cancelled'; requestId?: string; credits: JobCredits };

/** Seconds to wait before resubmit number `resubmit` (1, 2, ...): 2, 4, 8, ... capped at one minute. */
export function resubmitBackoffSeconds(resubmit: number): number {
  return Math.min(60, 2 ** resubmit);
}

/** Idempotency-Key of a deliberate attempt: stable across activity retries, fresh per resubmit and per run. */
export function idempotencyKeyFor(key: string, firstRunId: string, attempt: number): string {
  return `reelflow:${key}:${firstRunId}:${attempt}`;
}

/** One paid job and the one owner of its state: every change goes through its methods and is reported to `observe`. */
export class ServiceJob {
  readonly workflowId = workflowInfo().workflowId;
  readonly key: string;
  readonly label: string;
  readonly attempts: StepAttempt[] = [];
  readonly jobs = workflowJobs();
  /** The job's own part of a step row (the rest is computed from its attempts and quote). */
  private state: Partial<StepSummary> = { polls: 0 };
  /** The quoted price once known. */
  quoted?: number;
  private quoteError?: string;
  private quoting?: Promise<number>;

  constructor(
    readonly model: ModelId,
    readonly input: Record<string, unknown>,
    readonly options: ServiceJobOptions = {},
  ) {
    jobsStarted += 1;
    this.key = options.key ?? `${this.workflowId}/${workflowInfo().runId}/job/${jobsStarted}-${model}`;
    this.label = options.label ?? model;
    options.observe?.(this);
  }

  /**
   * The job's price, asked only before a submit a budget must allow, or for the ledger when a result
   * carries no charge: once for all attempts, and never cancelled half-way (the ledger needs it).
   */
  quote(): Promise<number> {
    return (this.quoting ??= CancellationScope.nonCancellable(() =>
      apiWith(ACTIVITY_SUMMARIES.quote(this.label, this.model)).quoteJob(this.model, this.input),
    ).then((quote) => (this.quoted = quote.credits)));
  }

  /** Charges `attempt` the quote (the service charges it on submit); a failed quote leaves the charge as it was. */
  async chargeQuote(attempt: StepAttempt): Promise<void> {
    try {
      attempt.charged = await this.quote();
    } catch (error) {
      this.quoteError =
        error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    }
  }

  /** Credits over all attempts (the quote only when one was asked). */
  credits(): JobCredits {
    const { charged, refunded } = this.view();
    return { ...(this.quoted !== undefined ? { quoted: this.quoted } : {}), charged, refunded };
  }

  /** The job as a step row shows it. */
  view(): Partial<StepSummary> & Pick<StepSummary, 'requestIds' | 'charged' | 'refunded' | 'quoted'> {
    const sum = (field: 'charged' | 'refunded') => this.attempts.reduce((total, a) => total + a[field], 0);
    return {
      ...this.state,
      attemptLog: this.attempts,
      requestIds: this.attempts.flatMap((a) => (a.requestId ? [a.requestId] : [])),
      attempts: this.attempts.length,
      quoted: this.quoted ?? 0,
      charged: sum('charged'),
      refunded: sum('refunded'),
      ...(this.quoteError !== undefined ? { quoteError: this.quoteError } : {}),
    };
  }

  /** Reports a change (an attempt's record was written). */
  changed(): void {
    this.options.observe?.(this);
  }

  /** Writes the job's own fields and reports the change. */
  set(patch: Partial<StepSummary>): void {
    Object.assign(this.state, patch);
    this.changed();
  }

  /** A status poll `secondsAfterSubmit` into the wait; `moved`: it found a state it had not found before. */
  polled(secondsAfterSubmit: number, moved: boolean): void {
    this.state.pollOffsetsSeconds = [...(this.state.pollOffsetsSeconds ?? []), secondsAfterSubmit];
    this.set({ polls: (this.state.polls ?? 0) + 1, ...(moved ? { lastChangeAt: Date.now() } : {}) });
  }

  /** Runs the job to its outcome (see runServiceJob). */
  async run(): Promise<ServiceJobOutcome> {
    try {
      for (let n = 1; ; n += 1) {
        // Before any spend: a FAILED attempt was refunded, so the remaining budget is unchanged.
        const remaining = this.options.budgetRemaining?.();
        if (remaining !== undefined) await this.checkBudget(remaining);
        if (n > 1) await this.backOff(resubmitBackoffSeconds(n - 1));
        // The submit itself cannot be cancelled half-way, so a cancel that came while quoting stops here.
        if (CancellationScope.current().consideredCancelled) throw new CancelledFailure('cancelled before the submit');
        const idempotencyKey = idempotencyKeyFor(this.key, workflowInfo().firstExecutionRunId, n);
        const attempt: StepAttempt = { attempt: n, idempotencyKey, charged: 0, refunded: 0 };
        this.attempts.push(attempt);
        this.set({ phase: 'submitting' });
        await submit(this, attempt);
        this.set({ submittedAt: this.state.submittedAt ?? Date.now(), lastChangeAt: Date.now(), phase: 'waiting' });
        let terminal: JobState;
        try {
          const pacing = resolvePacing(MODELS[this.model].expectedRunSeconds, this.options.pacing);
          terminal = await waitForOutcome(this, attempt, pacing);
          await settle(this, attempt, terminal);
        } catch (error) {
          // A failure after the job was accepted must not leave the paid job running unnoticed.
          if (isCancellation(error)) throw error;
          await cancelOrAbandon(this, attempt, `waiting for the job failed: ${reasonOf(error)}`);
          throw error;
        }
        // Cancelled at the service by someone else: the job is over, refunded.
        if (terminal !== 'FAILED') return this.end(terminal === 'COMPLETED' ? 'completed' : 'cancelled');
        this.failedAttempt(attempt, n);
      }
    } catch (error) {
      if (!isCancellation(error)) throw error;
      return this.end(await CancellationScope.nonCancellable(() => cancelStep(this)));
    }
  }

  private async backOff(seconds: number): Promise<void> {
    this.set({ phase: 'backing-off' });
    // The pipeline's operator can end the backoff early (`retryStep` update); the timer is the same.
    const wake = this.options.wakeBackoff;
    if (wake) await condition(wake, seconds * 1000, { summary: TIMER_SUMMARIES.backoff(this.label, seconds) });
    else await sleep(`${seconds} seconds`);
  }

  /** A FAILED attempt: refunded; the job goes on to a resubmit, or fails past its policy with the service's reason. */
  private failedAttempt(attempt: StepAttempt, n: number): void {
    const reason = attempt.serviceError ? `${attempt.serviceError.code}: ${attempt.serviceError.message}` : undefined;
    attempt.error = `the service reported FAILED (refunded)${reason ? `: ${reason}` : ''}`;
    const maxResubmits = this.options.maxResubmits ?? 0;
    if (n <= maxResubmits) return;
    const message = `failed ${n} time(s); policy allows ${maxResubmits} resubmit(s); every attempt was refunded${reason ? `; the service said ${reason}` : ''}`;
    this.finish('failed', message);
    const requestIds = this.attempts.map((a) => a.requestId).join(', ');
    const attempts = this.attempts.map(({ attempt, requestId, outcome, serviceError }) => {
      return { attempt, requestId, outcome, serviceError };
    });
    throw workflowFailure(
      FAILURE_TYPES.jobFailed,
      `step ${this.label} (${this.model}): ${message} (request ids ${requestIds})`,
      { step: this.label, attempts },
    );
  }

  private end(status: ServiceJobOutcome['status']): ServiceJobOutcome {
    this.finish(status);
    const { requestId } = this.attempts.at(-1) ?? {};
    const { output } = this.view();
    const credits = this.credits();
    if (status !== 'cancelled' && output && requestId) return { status, requestId, result: output, credits };
    return { status: 'cancelled', ...(requestId ? { requestId } : {}), credits };
  }

  /** Phase done; the outcome and credits counted by the SDK's metric meter (dropped on replay, so each counts once). */
  private finish(outcome: string, error?: string): void {
    this.set({ phase: 'done', ...(error ? { error } : {}) });
    const { charged, refunded } = this.view();
    metricMeter
      .createCounter('reelflow_jobs', 'jobs', 'Job workflows finished, by model and outcome.')
      .add(1, { model: this.model, outcome });
    if (charged > 0)
      metricMeter
        .createCounter('reelflow_credits_charged', 'credits', 'Credits charged by job workflows, by model.')
        .add(charged, { model: this.model });
    if (refunded > 0)
      metricMeter
        .createCounter('reelflow_credits_refunded', 'credits', 'Credits refunded to job workflows, by model.')
        .add(refunded, { model: this.model });
  }

  /** Stops the job before any spend when its quote exceeds what the budget has left. */
  private async checkBudget(remaining: number): Promise<void> {
    this.set({ phase: 'quoting' });
    const credits = await this.quote();
    if (credits <= remaining) return;
    const reason = `quote of ${credits} credits exceeds the remaining budget of ${remaining}`;
    this.finish('budget-exceeded', reason);
    const message = `step ${this.label}: ${reason}; nothing was submitted`;
    throw workflowFailure(FAILURE_TYPES.budgetExceeded, message, { quote: credits, remaining });
  }
}

/**
 * Submits `attempt` and subscribes the workflow to its webhook events, in one activity that is never
 * cancelled half-way: once the POST may have reached the service, the request id must be learned.
 * An ambiguous submit waits for an operator decision (./ambiguous.ts); a 202 that breaks the contract
 * is cancelled or recorded as abandoned before the step fails.
 */
async function submit(job: ServiceJob, attempt: StepAttempt): Promise<void> {
  for (;;) {
    // The submit below runs in a non-cancellable scope; a cancel that came first must stop it here.
    if (CancellationScope.current().consideredCancelled) {
      throw new CancelledFailure('pipeline cancelled before the submit; nothing was sent');
    }
    const ahead = job.jobs.submittedAhead.get(attempt.idempotencyKey);
    if (ahead) {
      // The bridge submitted this attempt with the key prepared for it: the same job a submit would get.
      job.jobs.submittedAhead.delete(attempt.idempotencyKey);
      adopt(job, attempt, ahead.request, ahead.earlyEvents);
      attempt.submittedBy = 'bridge';
      return;
    }
    const activity = submitActivities(
      ACTIVITY_SUMMARIES.submit(job.label, job.model, attempt.idempotencyKey, attempt.attempt),
      job.options.submitTimeoutSeconds,
      job.options.submitAs,
    );
    try {
      const answer = await CancellationScope.nonCancellable(() =>
        activity.submitAndSubscribe({
          model: job.model,
          input: job.input,
          idempotencyKey: attempt.idempotencyKey,
          subscriberWorkflowId: job.workflowId,
          ...(job.options.prepareNext ? { prepareNext: job.options.prepareNext } : {}),
        }),
      );
      if (answer.atCapacity) {
        await awaitPermit(job, attempt);
        continue;
      }
      if (answer.permit) attempt.permit = true;
      adopt(job, attempt, answer.request, answer.earlyEvents);
      if (answer.preparedKey) job.jobs.preparedBehind.set(answer.request.request_id, answer.preparedKey);
      return;
    } catch (error) {
      // An activity's failure carries the ApplicationFailure as its cause; a local activity's may be it.
      const cause = error instanceof ActivityFailure ? error.cause : error;
      if (cause instanceof ApplicationFailure && cause.type === FAILURE_TYPES.submitAnswerInvalid) {
        throw await invalidAnswer(job, attempt, cause);
      }
      if (!(cause instanceof ApplicationFailure) || cause.type !== FAILURE_TYPES.ambiguousSubmission) throw error;
      const why = `the submit may have created a job but no usable answer came back (${cause.message})`;
      // Adopted: the job is the operator's request id; resubmit: the same key again.
      if ((await awaitDecision(job, attempt, why)) === 'adopted') {
        // The ambiguous submit kept its permit, if it took one: the adopted job gives it back when settled.
        attempt.permit = true;
        return;
      }
    }
  }
}

/** Takes `request` as the attempt's job (its answer, from the submit or the bridge), with the events that overtook it. */
function adopt(job: ServiceJob, attempt: StepAttempt, request: GenerationRequest, earlyEvents: WebhookEvent[]): void {
  attempt.requestId = request.request_id;
  attempt.statusUrl = request.status_url;
  attempt.responseUrl = request.response_url;
  attempt.cancelUrl = request.cancel_url;
  // This workflow's key is submitted now: the row that prepared it needs no revoke.
  for (const [requestId, key] of job.jobs.preparedBehind)
    if (key === attempt.idempotencyKey) job.jobs.preparedBehind.delete(requestId);
  for (const event of earlyEvents) job.jobs.inbox.accept(event);
}

/** The 202 broke the contract: cancel the accepted job by what could be read, or record it; then fail the step. */
async function invalidAnswer(
  job: ServiceJob,
  attempt: StepAttempt,
  cause: ApplicationFailure,
): Promise<ApplicationFailure> {
  // What of the accepted job the activity could read (its SubmitAnswerInvalid details, src/activities/errors.ts).
  const details = (cause.details?.[0] ?? {}) as { requestId?: string; cancelUrl?: string };
  if (details.requestId) attempt.requestId = details.requestId;
  if (details.cancelUrl) attempt.cancelUrl = details.cancelUrl;
  const reason = `the service accepted the submit but its answer breaks the contract (${cause.message})`;
  // The submit kept the account's permit, if it took one, for the job it created: settling gives it back.
  attempt.permit = true;
  await job.chargeQuote(attempt).catch(() => undefined);
  await cancelOrAbandon(job, attempt, reason);
  const fate = attempt.abandoned ? 'recorded as abandoned' : `cancelled (${attempt.outcome ?? 'state unknown'})`;
  const error = `${reason}; the job${attempt.requestId ? ` ${attempt.requestId}` : ''} was ${fate}`;
  job.set({ error });
  return workflowFailure(FAILURE_TYPES.submitAnswerInvalid, `step ${job.label}: ${error}`, {
    idempotencyKey: attempt.idempotencyKey,
    step: job.label,
    ...(attempt.requestId ? { requestId: attempt.requestId } : {}),
  });
}

/**
 * The account's cap on jobs in flight (REELFLOW_ACCOUNT_CONCURRENCY) left no permit for the submit:
 * wait for one here, where a cancel reaches the wait; a cancel that ends it gives back what it took.
 */
async function awaitPermit(job: ServiceJob, attempt: StepAttempt): Promise<void> {
  const before = job.view().phase;
  job.set({ phase: 'capacity' });
  attempt.permit = true;
  try {
    await permitActivities.awaitAccountPermit({ idempotencyKey: attempt.idempotencyKey, workflowId: job.workflowId });
  } catch (error) {
    if (isCancellation(error)) await releasePermit(attempt);
    throw error;
  }
  if (before) job.set({ phase: before });
}
