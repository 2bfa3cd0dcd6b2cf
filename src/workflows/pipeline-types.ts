import type { JobResult, ModelId, UriRules } from '../contract';
import type { PipelineSpec } from '../pipeline/spec';
import type { PollPacing } from '../pipeline/pacing';
import type { ResumeFrom } from './resume-types';

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
}

export type StepStatus =
  | 'pending'
  | 'running'
  | 'completed'
  | 'failed'
  | 'budget-exceeded'
  | 'cancelled'
  | 'completed-too-late'
  | 'skipped';

/** Per-step state in the summary. */
export interface StepSummary {
  id: string;
  model: ModelId;
  status: StepStatus;
  jobWorkflowId: string;
  requestIds: string[];
  attempts: number;
  quoted: number;
  charged: number;
  refunded: number;
  polls: number;
  /** The input as submitted, references resolved. */
  input?: Record<string, unknown>;
  output?: JobResult;
  error?: string;
}

export interface CreditLedger {
  quoted: number;
  charged: number;
  refunded: number;
  /** charged − refunded. */
  net: number;
}

export type PipelineStatus = 'running' | 'completed' | 'failed' | 'cancelled';

/** Progress query answer and the workflow's result. */
export interface PipelineSummary {
  name: string;
  status: PipelineStatus;
  currentStep: string | null;
  budgetCredits: number | null;
  ledger: CreditLedger;
  steps: StepSummary[];
  /** Step id → result of that step. */
  outputs: Record<string, JobResult>;
  error?: string;
}

/** ApplicationFailure types thrown by the pipeline workflow. */
export const PIPELINE_FAILURE_TYPES = {
  invalidSpec: 'InvalidPipelineSpec',
  stepFailed: 'StepFailed',
  budgetExceeded: 'BudgetExceeded',
  stepCancelled: 'StepCancelled',
} as const;
