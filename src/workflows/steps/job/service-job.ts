import {
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  metricMeter,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { JobResult, JobState, ModelId, ModelInputs } from '../../../contract';
import { FAILURE_TYPES } from '../../../contract/failure-types';
import { MODELS } from '../../../contract/model-metadata';
import { resolvePacing } from '../../../pipeline-spec/pacing';
import { ACTIVITY_SUMMARIES, TIMER_SUMMARIES } from '../../../pipeline-spec/ui-text';
import { workflowFailure } from '../../errors';
import type { StepAttempt, StepSummary } from '../../pipeline-types';
import { MISSED_START, cancelOrAbandon, cancelStep, cancelUnstarted, reasonOf } from './cancel';
import { StartDeadlinePassed } from './errors';
import { settle, waitForOutcome } from './outcome';
import { apiWith } from './proxies';
import { submit } from './submit';
import type { JobCredits, JobHandle, ServiceJobOptions, ServiceJobOutcome } from './types';
import { workflowJobs } from './workflow-jobs';

export type { JobCredits, ServiceJobOptions, ServiceJobOutcome } from './types';
export { chargesSettled } from './workflow-jobs';

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

/** Seconds to wait before resubmit number `resubmit` (1, 2, ...): 2, 4, 8, ... capped at one minute. */
export function resubmitBackoffSeconds(resubmit: number): number {
  return Math.min(60, 2 ** resubmit);
}

/** Idempotency-Key of a deliberate attempt: stable across activity retries, fresh per resubmit and per run. */
export function idempotencyKeyFor(key: string, firstRunId: string, attempt: number): string {
  return `reelflow:${key}:${firstRunId}:${attempt}`;
}

/** One paid job and the one owner of its state: every change goes through its methods and is reported to `observe`. */
export class ServiceJob implements JobHandle {
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

  /** True once the current attempt has a request id (its submit was answered). */
  submitted(): boolean {
    return Boolean(this.attempts.at(-1)?.requestId);
  }

  /** True while its submit runs as a local activity: the workflow task stays open, so the pipeline publishes after it. */
  holdsTaskOpen(): boolean {
    return this.options.submitAs === 'local-activity' && this.view().phase === 'submitting';
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
        const terminal = await this.outcomeOf(attempt);
        if (terminal === MISSED_START) {
          this.missedStart(n);
          continue;
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

  /**
   * Waits for `attempt`'s terminal state and settles it. With a start deadline (fresh for each
   * attempt, from its submit's answer): `missed-start` when the job was cancelled still queued.
   */
  private async outcomeOf(attempt: StepAttempt): Promise<JobState | typeof MISSED_START> {
    const seconds = this.options.startDeadlineSeconds;
    const startDeadline = seconds === undefined ? undefined : { at: Date.now() + seconds * 1000, seconds };
    try {
      const pacing = resolvePacing(MODELS[this.model].expectedRunSeconds, this.options.pacing);
      let terminal: JobState;
      try {
        terminal = await waitForOutcome(this, attempt, pacing, startDeadline);
      } catch (error) {
        if (!(error instanceof StartDeadlinePassed)) throw error;
        return await cancelUnstarted(this, attempt, error.seconds);
      }
      await settle(this, attempt, terminal);
      return terminal;
    } catch (error) {
      // A failure after the job was accepted must not leave the paid job running unnoticed.
      if (isCancellation(error)) throw error;
      await cancelOrAbandon(this, attempt, `waiting for the job failed: ${reasonOf(error)}`);
      throw error;
    }
  }

  /** The attempt was cancelled unstarted at its start deadline (refunded): resubmitted as the policy allows, else the job fails. */
  private missedStart(n: number): void {
    const maxResubmits = this.options.maxResubmits ?? 0;
    if (n <= maxResubmits) return;
    const seconds = this.options.startDeadlineSeconds as number;
    const message = `not started within ${seconds} s of its submit ${n} time(s); each job was cancelled while still IN_QUEUE (refunded); policy allows ${maxResubmits} resubmit(s)`;
    this.finish('start-deadline-exceeded', message);
    const requestIds = this.attempts.map((a) => a.requestId).join(', ');
    throw workflowFailure(
      FAILURE_TYPES.startDeadlineExceeded,
      `step ${this.label} (${this.model}): ${message} (request ids ${requestIds})`,
      { step: this.label, startDeadlineSeconds: seconds, requestIds: this.attempts.map((a) => a.requestId) },
    );
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
    // A job's row only ever holds a job's result.
    if (status !== 'cancelled' && output && requestId)
      return { status, requestId, result: output as JobResult, credits };
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
