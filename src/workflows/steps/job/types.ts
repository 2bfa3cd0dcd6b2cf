import type { JobResult, ModelId } from '../../../contract';
import type { PreparedChain, PreparedSubmission } from '../../../contract/prepared-submission';
import type { SubmitAs } from '../../../activities';
import type { PollPacing } from '../../../pipeline-spec/pacing';
import type { StepAttempt, StepSummary } from '../../pipeline-types';
import type { AmbiguousSubmit, RecoveryMemo, ResolveDecision } from '../../recovery-types';
import type { StepProgress } from '../kind';
import type { JobEventBuffer } from './job-event-buffer';

/**
 * The words of the paid-job kind: its options and outcome (reelflow/workflows' `runServiceJob`), the
 * state the jobs of one workflow share, and what its phases (submit, outcome, cancel, ambiguous) see
 * of a job. The phases import this module, never ./service-job.ts, so they form no circle with it.
 */

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
  /**
   * Seconds from each submit's answer by which the provider must have started the job: one still
   * IN_QUEUE then is cancelled (free before it starts) and the attempt counts as missed; past
   * `maxResubmits` the job fails `StartDeadlineExceeded`. Default none.
   */
  startDeadlineSeconds?: number;
  /** Credits the job may still spend, read before each submit; absent: no budget check and no quote before it. */
  budgetRemaining?: () => number | undefined;
  submitTimeoutSeconds?: number;
  /** How the submit runs (default `activity`; `local-activity` only where the service honours Idempotency-Key: SubmitAs). */
  submitAs?: SubmitAs;
  /** How long an ambiguous submit waits for an operator decision, hours (default 24). */
  ambiguousDeadlineHours?: number;
  /** @internal reelflow's pipeline hook: told at the start and on every change of the job's state. */
  observe?: (job: JobHandle) => void;
  /**
   * @internal reelflow's pipeline hook: the steps after this job the bridge may submit when it completes
   * (the activity writes them only where that is safe: SubmitRequest.prepareNext).
   */
  prepareNext?: PreparedChain;
  /**
   * @internal reelflow's batch hook: the account refused a submit (./account-refusal.ts); resolves when
   * the submit may be sent again (the batch resumed). Absent: the refusal fails the job.
   */
  whenAccountRefused?: (refusal: AccountRefusal) => Promise<void>;
  /** @internal reelflow's pipeline hook: true once an operator asked to end a resubmit backoff now (`retryStep`). */
  wakeBackoff?: () => boolean;
}

/** A refusal of the account rather than of the job (credits, key, 429s past the bound): its problem code and message. */
export interface AccountRefusal {
  code: string;
  message: string;
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

/** A pipeline's recovery record as the workflow keeps it: the memo part plus what is pending now. */
export interface RecoveryState extends RecoveryMemo {
  /** The ambiguous step waiting for a decision (one step runs at a time). */
  waiting?: AmbiguousSubmit;
  /** The decision the update handler accepted, taken by the waiting step. */
  decision?: ResolveDecision;
}

/** What the jobs of one workflow share: their webhook events, the recovery record, the ledger quotes still running. */
export interface WorkflowJobs {
  events: JobEventBuffer;
  recovery: RecoveryState;
  charges: Promise<void>[];
  /** Jobs the bridge submitted with this workflow's prepared keys, by Idempotency-Key, until a submit adopts them. */
  submittedAhead: Map<string, PreparedSubmission>;
  /** Request ids whose subscription carries a prepared submit, with that submit's key, until this workflow submits that key. */
  preparedBehind: Map<string, string>;
  /** Idempotency-Keys whose queued submissions were granted one of the account's slots (`slotGranted`). */
  slotGrants: Set<string>;
}

/** What the phases of a job read and write of it: ./service-job.ts's `ServiceJob` is the one implementation. */
export interface JobHandle extends StepProgress {
  readonly workflowId: string;
  readonly key: string;
  readonly label: string;
  readonly model: ModelId;
  readonly input: Record<string, unknown>;
  readonly options: ServiceJobOptions;
  readonly attempts: StepAttempt[];
  readonly jobs: WorkflowJobs;
  /** The quoted price once known. */
  readonly quoted?: number;
  /** The job's price (asked once; see ServiceJob.quote). */
  quote(): Promise<number>;
  /** Charges `attempt` the quote; a failed quote leaves the charge as it was. */
  chargeQuote(attempt: StepAttempt): Promise<void>;
  /** The job as a step row shows it. */
  view(): Partial<StepSummary> & Pick<StepSummary, 'requestIds' | 'charged' | 'refunded' | 'quoted'>;
  /** Reports a change (an attempt's record was written). */
  changed(): void;
  /** Writes the job's own fields and reports the change. */
  set(patch: Partial<StepSummary>): void;
  /** A status poll `secondsAfterSubmit` into the wait; `moved`: it found a state it had not found before. */
  polled(secondsAfterSubmit: number, moved: boolean): void;
}
