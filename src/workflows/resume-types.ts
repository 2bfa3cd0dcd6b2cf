import type { JobResult } from '../contract';
import type { CreditLedger, StepSummary } from './pipeline-types';

/** A completed step carried from an earlier run (paid there, not here); its request ids and credits are that run's. */
export interface CarriedStep extends Pick<StepSummary, 'requestIds' | 'charged' | 'refunded'> {
  /** The step's result in the earlier run, its output URLs verified to still answer. */
  output: JobResult;
  /** Run id of the run that paid for it (an earlier resume carries it on unchanged). */
  paidInRunId: string;
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
