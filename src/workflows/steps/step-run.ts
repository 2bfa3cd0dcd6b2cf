import type { PollPacing } from '../../spec/pacing';
import type { ModelId } from '../../contract';
import type { StepAttempt, StepSummary } from '../pipeline-types';
import type { Inbox } from './inbox';
import type { PendingCharges, StepQuote } from './quote';
import type { RecoveryState } from '../recovery';

/** Everything one step of a pipeline works with; built by the pipeline, passed to each step function. */
export interface StepRun {
  /** The pipeline's workflow id: the receiver of this step's webhook events. */
  workflowId: string;
  /** First run id of the pipeline (part of the Idempotency-Key, stable across continue-as-new and retries). */
  firstRunId: string;
  /** `<pipeline>/job/<step>`: the stem of the step's Idempotency-Keys. */
  stepKey: string;
  stepId: string;
  model: ModelId;
  /** The input with references resolved. */
  input: Record<string, unknown>;
  /** The step's row in the summary (updated in place: status, phase, attempts, polls, output). */
  row: StepSummary;
  attempts: StepAttempt[];
  inbox: Inbox;
  quote: StepQuote;
  /** The pipeline's ledger quotes still running (awaited before it closes). */
  charges: PendingCharges;
  pacing: PollPacing;
  maxResubmits: number;
  /** Credits this step may still spend (budget minus net spend so far); absent without a budget. */
  budgetRemaining?: number;
  submitTimeoutSeconds?: number;
  /** The pipeline's record of abandoned jobs and ambiguous submits (shared by all its steps). */
  recovery: RecoveryState;
  /** How long an ambiguous submit waits for a decision, hours (default 24). */
  ambiguousDeadlineHours?: number;
  /** Refreshes the row's ledger and publishes the summary (memo, search attributes). */
  changed(): void;
  /** Set by the operator console: true once a `retryStep` update asked to end the backoff before a resubmit now. */
  wakeBackoff?: () => boolean;
}

/** How a step ended when it did not fail. */
export type StepEnd = 'completed' | 'cancelled' | 'completed-too-late';

/** The attempt in flight (the last one). */
export function currentAttempt(run: StepRun): StepAttempt | undefined {
  return run.attempts[run.attempts.length - 1];
}

/** Idempotency-Key of a deliberate attempt: stable across activity retries, fresh per resubmit and per run. */
export function idempotencyKeyFor(stepKey: string, firstRunId: string, attempt: number): string {
  return `reelflow:${stepKey}:${firstRunId}:${attempt}`;
}
