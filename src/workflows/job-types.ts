import type { JobResult, JobState as ServiceJobState, ModelId } from '../contract';
import type { PollPacing } from '../spec/pacing';

/** Input of `jobWorkflow`: one step's service request (and its deliberate resubmits). */
export interface JobWorkflowInput {
  pipeline: string;
  step: string;
  model: ModelId;
  /** Fully resolved input (no references left). */
  input: Record<string, unknown>;
  /** Deliberate resubmits after a FAILED job; default 0. */
  maxResubmits?: number;
  /** Credits this job may still spend (pipeline budget minus net spend so far); absent = no budget. */
  budgetRemaining?: number;
  /** Fallback-poll pacing overrides; defaults from the model's expected run time. */
  pacing?: Partial<PollPacing>;
  /** Start-to-close timeout of one submit attempt, seconds (default 120). A crashed worker's submit is retried after it. */
  submitTimeoutSeconds?: number;
}

/** Where a job stands; `jobState` query. */
export type JobPhase =
  | 'quoting'
  | 'submitting'
  | 'waiting'
  | 'fetching-result'
  | 'completed'
  | 'failed'
  | 'budget-exceeded'
  | 'ambiguous-submission'
  | 'cancelling'
  | 'cancelled'
  | 'completed-too-late';

/**
 * One service request of a job or a pipeline step (the first submit or a deliberate resubmit): what
 * both workflows record of it. StepAttempt (pipeline-types.ts) adds the step's own fields.
 */
export interface RequestAttempt {
  attempt: number;
  idempotencyKey: string;
  requestId?: string;
  cancelUrl?: string;
  /** Terminal state of this request once known. */
  outcome?: ServiceJobState;
  /** How the outcome was learned. */
  learnedBy?: 'webhook' | 'poll' | 'cancel';
  /** Where the result of a COMPLETED attempt came from: its webhook event, or a fetch of `response_url`. */
  resultFrom?: 'event' | 'fetch';
  charged: number;
  refunded: number;
  error?: string;
}

/** One service request of the job. */
export type JobAttempt = RequestAttempt;

/** State of a job workflow (query result and part of the outcome). */
export interface JobState {
  workflowId: string;
  pipeline: string;
  step: string;
  model: ModelId;
  phase: JobPhase;
  quote?: number;
  attempts: JobAttempt[];
  /** Status polls made (0 on a healthy webhook path). */
  polls: number;
  /** Seconds after waiting began (submit acknowledged; workflow time) at which each poll of the current attempt happened. */
  pollOffsetsSeconds: number[];
  /** Distinct events received, duplicates ignored, and events that matched no current request. */
  eventsReceived: number;
  duplicateEvents: number;
  ignoredEvents: number;
  result?: JobResult;
  error?: string;
  /** Why the quote failed when it ran after the submit (the charge is then unknown unless the result says). */
  quoteError?: string;
}

/** What a job workflow returns (it fails instead for FAILED past policy, budget, ambiguity). */
export interface JobOutcome extends JobState {
  phase: 'completed' | 'cancelled' | 'completed-too-late';
  /** Credits: quoted once per job; charged and refunded summed over attempts. */
  ledger: { quoted: number; charged: number; refunded: number };
  requestIds: string[];
}
