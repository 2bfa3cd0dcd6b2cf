import type { UriRules } from '../contract';
import type { PipelineSpec } from '../spec/spec';
import type { PollPacing } from '../spec/pacing';
import type { CreditLedger, PipelineStatus } from './pipeline-types';
import type { ResumeFrom } from './resume-types';

/** Outcome of one pipeline of a batch (kept small: it is carried across continue-as-new). */
export interface BatchItemResult {
  name: string;
  workflowId: string;
  status: Exclude<PipelineStatus, 'running'> | 'skipped';
  ledger?: CreditLedger;
  /** Output URL of the last step. */
  finalOutputUrl?: string;
  error?: string;
}

/** Input of `batchWorkflow`. */
export interface BatchWorkflowInput {
  name: string;
  /** The manifest: one pipeline spec per item; names must be unique. */
  items: PipelineSpec[];
  /** Pipelines in flight at once (default 4). */
  concurrency?: number;
  /** Items started per run before continue-as-new (default 100). */
  itemsPerRun?: number;
  /**
   * Re-run mode: results of a previous batch (its result, or its `batchProgress` query). Only items
   * whose previous status is not `completed` run; the others are carried over as they were.
   */
  rerunOf?: BatchItemResult[];
  /**
   * Re-run mode, per item name: the earlier pipeline run to resume (its completed steps carried,
   * `reelflow batch --rerun-failed`). Items without one start from their first step.
   */
  resumes?: Record<string, ResumeFrom>;
  uriRules?: UriRules;
  defaultPacing?: Partial<PollPacing>;
  /** Passed to every pipeline (false on a namespace without reelflow's search attributes). */
  publishSearchAttributes?: boolean;
  /** Set by the workflow itself when it continues as new. */
  carried?: { nextIndex: number; results: BatchItemResult[]; runs: number };
}

/** `batchProgress` query answer and the workflow's result. */
export interface BatchProgress {
  name: string;
  total: number;
  /** Items this batch runs (all, or only the failed ones in re-run mode). */
  toRun: number;
  completed: number;
  failed: number;
  cancelled: number;
  skipped: number;
  running: string[];
  /** Runs of this batch so far (continue-as-new count + 1). */
  runs: number;
  results: BatchItemResult[];
  status: 'running' | 'completed' | 'cancelled';
}
