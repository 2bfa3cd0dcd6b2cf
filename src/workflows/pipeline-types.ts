import type { ArchivedOutput } from '../contract/archived-output';
import type { JobResult, JobState, ModelId, UriRules } from '../contract';
import type { OpName } from '../pipeline-spec/steps/op-types';
import type { PipelineSpec } from '../pipeline-spec/spec';
import type { PollPacing } from '../pipeline-spec/pacing';
import type { ApprovalOutput, ApprovalView } from './approval-types';
import type { RecoveryMemo } from './recovery-types';

/** Input of `pipelineWorkflow`. */
export interface PipelineWorkflowInput {
  spec: PipelineSpec;
  /** URI rules for validating literal inputs (a local service's own http origin). */
  uriRules?: UriRules;
  /** Pacing applied to every step that sets none (tests shorten it). */
  defaultPacing?: Partial<PollPacing>;
  submitTimeoutSeconds?: number;
  /** Set false on a namespace without reelflow's search attributes (memo and query still work). Default true. */
  publishSearchAttributes?: boolean;
  /** A resumed run (`reelflow resume`): completed steps of an earlier run to carry instead of running. */
  resume?: ResumeFrom;
  /** How long an ambiguous step waits for an operator decision, hours (default 24). */
  ambiguousDeadlineHours?: number;
  /** false (`reelflow run --no-preflight`): skip the preflight check of every step's inputs. Default true. */
  preflight?: boolean;
  /** An item of a batch: the pipeline signals its end (`batchItemDone`) to this batch workflow id. */
  batch?: { workflowId: string };
}

export type StepStatus =
  | 'pending'
  | 'running'
  | 'completed'
  | 'failed'
  | 'budget-exceeded'
  | 'cancelled'
  | 'completed-too-late'
  | 'skipped'
  /** An approval gate a person (or its timeout) rejected. */
  | 'rejected';

/** Where a running step stands. */
export type StepPhase =
  | 'preflight'
  | 'quoting'
  /**
   * @deprecated Reported only by pipelines pinned to builds up to 0.3.0 (filesystem permits), whose
   * progress queries their own build answers; today's builds say `slot`.
   */
  | 'capacity'
  /** Its submit waits for one of the account's slots (the `slotGranted` signal). */
  | 'slot'
  | 'submitting'
  /** A batch item whose submit the account refused: waiting for `reelflow batch resume`. */
  | 'paused'
  | 'ambiguous'
  | 'waiting'
  | 'fetching-result'
  | 'backing-off'
  | 'cancelling'
  /** An op step: its operation runs on a worker (ffmpeg). */
  | 'editing'
  /** An approval gate waits for a person's decision. */
  | 'person'
  | 'done';

/** One service request of a step: the first submit or a deliberate resubmit. */
export interface StepAttempt {
  attempt: number;
  idempotencyKey: string;
  requestId?: string;
  cancelUrl?: string;
  /** Terminal state of this request once known. */
  outcome?: JobState;
  /** How the outcome was learned. */
  learnedBy?: 'webhook' | 'poll' | 'cancel';
  /** Where the result of a COMPLETED attempt came from: its webhook event, or a fetch of `response_url`. */
  resultFrom?: 'event' | 'fetch';
  charged: number;
  refunded: number;
  error?: string;
  statusUrl?: string;
  responseUrl?: string;
  /** The webhook bridge submitted this attempt with the pipeline's prepared request (src/routing/prepared.ts). */
  submittedBy?: 'bridge';
  /** The request id came from an operator's `adopt` decision (the submit's answer was lost). */
  adopted?: boolean;
  /** Accepted and billed, but neither usable nor cancellable: recorded in the pipeline's recovery record. */
  abandoned?: boolean;
  /** The service's reason for a FAILED (or CANCELLED) request, from its event or its status. */
  serviceError?: ServiceError;
  /** Holds (or waits for) one of the account's slots (REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY) until its job is terminal. */
  permit?: true;
}

/** `error.code` and `error.message` of a failed job, as the service gave them. */
export interface ServiceError {
  code: string;
  message: string;
}

/** Webhook events a pipeline received (distinct ones, repeats, and ones that matched no attempt). */
export interface EventCounts {
  received: number;
  duplicates: number;
  ignored: number;
}

/**
 * The fields of a step's row that belong to its kind (src/workflows/steps/): a paid job names its
 * model. A new kind adds its own here, as one more member of the union.
 */
export type StepKindFields = JobStepFields | OpStepFields | ApprovalStepFields;

/** A paid job's own field of its row: the model it runs (the Temporal UI's `ReelflowModels`). */
export interface JobStepFields {
  model: ModelId;
}

/** A local media operation's own field of its row: the operation (`concat`, `trim`, `mux_audio`, `frame`). */
export interface OpStepFields {
  op: OpName;
}

/** An approval gate's own fields of its row: what it shows and how it was decided. */
export interface ApprovalStepFields {
  op: 'approval';
  approval: ApprovalView;
}

/** What a completed step gives later steps: a paid job's result, or an approved gate's (./approval-types.ts). */
export type StepOutput = JobResult | ApprovalOutput;

/** Per-step state in the summary: what every kind of step has, and its kind's own fields. */
export type StepSummary = StepRow & StepKindFields;

/** What every step's row has, whatever its kind. */
export interface StepRow {
  id: string;
  status: StepStatus;
  /** The step's key `<pipeline>/job/<step>`: the stem of its Idempotency-Keys. */
  stepKey: string;
  /** Where the step stands, and each of its service requests. */
  phase?: StepPhase;
  attemptLog?: StepAttempt[];
  /** Why the quote failed when it ran beside the job (the charge is then taken from the result). */
  quoteError?: string;
  /** Seconds after the current attempt's submit at which each status poll happened. */
  pollOffsetsSeconds?: number[];
  /** Clock of the step, epoch ms of workflow time: started, first submit answered, ended, last change, next poll. */
  startedAt?: number;
  submittedAt?: number;
  finishedAt?: number;
  lastChangeAt?: number;
  nextPollAt?: number;
  requestIds: string[];
  attempts: number;
  quoted: number;
  charged: number;
  refunded: number;
  polls: number;
  /** The input as submitted, references resolved. */
  input?: Record<string, unknown>;
  output?: StepOutput;
  /** The outputs copied into the media store (docs/media-store.md), one per archived video. */
  archived?: ArchivedOutput[];
  /** Why archiving the outputs failed (the step itself completed; later steps use the service URL). */
  archiveError?: string;
  error?: string;
  /** Resumed runs: the run id that paid for this step (its output is carried, nothing is paid here). */
  carriedFrom?: string;
  /** Version 2: the steps it waits for (those its references read, then `after`). */
  dependsOn?: string[];
  /** Version 2: what a pending or running step waits for (its dependencies, its job, an account slot, a person). */
  waitingFor?: WaitingFor;
  /** A fan-out step (`each`): one row per item, in item order. */
  items?: StepItemSummary[];
}

/** What a step of a graph waits for. */
export type WaitingFor = 'dependencies' | 'job' | 'slot' | 'person';

/** One item of a fan-out step: its own job, key `<pipeline>/job/<step>/<item>`. */
export interface StepItemSummary {
  index: number;
  status: StepStatus;
  phase?: StepPhase;
  requestIds: string[];
  charged: number;
  refunded: number;
  output?: StepOutput;
  archived?: ArchivedOutput[];
  archiveError?: string;
  error?: string;
  /** Resumed runs: the run id that paid for this item. */
  carriedFrom?: string;
}

export interface CreditLedger {
  quoted: number;
  charged: number;
  refunded: number;
  /** charged − refunded. */
  net: number;
}

export type PipelineStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'rejected';

/** Progress query answer and the workflow's result. */
export interface PipelineSummary {
  name: string;
  status: PipelineStatus;
  currentStep: string | null;
  budgetCredits: number | null;
  ledger: CreditLedger;
  steps: StepSummary[];
  /** Step id → result of that step. */
  outputs: Record<string, StepOutput>;
  /** Version 2: fan-out step id → the results of its completed items, in item order (what `[*]` reads). */
  itemOutputs?: Record<string, StepOutput[]>;
  /** 2 for a graph (a version-2 spec); absent for version 1. */
  version?: 2;
  error?: string;
  events?: EventCounts;
  /** Jobs abandoned and ambiguous submits; also in the memo under `recovery`. */
  recovery?: RecoveryMemo;
  /** A resumed run: the earlier run it carries completed steps from, and that run's ledger. */
  resumedFrom?: ResumedFromSummary;
}

/** Answer of every operator update: what the pipeline did, in words. */
export interface OperatorAnswer {
  ok: true;
  message: string;
}

export interface CancelPipelineArgs {
  reason?: string;
}
export interface RetryStepArgs {
  step: string;
}
export type CancelStepArgs = RetryStepArgs & CancelPipelineArgs;
export interface RaiseBudgetArgs {
  credits: number;
}

/** A completed step carried from an earlier run (paid there, not here); its request ids and credits are that run's. */
export interface CarriedStep extends Pick<StepSummary, 'requestIds' | 'charged' | 'refunded'> {
  /** The step's result in the earlier run, its output URLs verified to still answer (a fan-out step: in `items`). */
  output?: StepOutput;
  /** Run id of the run that paid for it (an earlier resume carries it on unchanged). */
  paidInRunId: string;
  /** A fan-out step: its items that completed in the earlier run, by item index (the others run again). */
  items?: Record<number, CarriedStep>;
}

/** `resume` of a pipeline's input: the new run carries the steps an earlier run completed and pays for the rest. */
export interface ResumeFrom {
  workflowId: string;
  /** The earlier run this one resumes. */
  runId: string;
  /** Its ledger (which already includes whatever runs before it paid for carried steps). */
  ledger: CreditLedger;
  /** Step id → the completed step to carry. */
  steps: Record<string, CarriedStep>;
}

/** What a resumed run shows of its origin in its summary. */
export interface ResumedFromSummary extends Omit<ResumeFrom, 'steps'> {
  carriedSteps: string[];
}
