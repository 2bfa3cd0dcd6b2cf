import type { SubmitAs } from '../../activities';
import type { PipelineStep } from '../../pipeline-spec/spec';
import type { StepKindKey } from '../../pipeline-spec/steps/registry';
import type { CarriedStep, PipelineWorkflowInput, StepKindFields, StepOutput, StepSummary } from '../pipeline-types';

/**
 * A kind of pipeline step as the pipeline workflow runs it. The pipeline knows steps only through
 * this interface; each kind is one folder of ./ (./job/: one paid job of the service), one row of
 * ./registry.ts, and its spec side (schema, input check) in src/pipeline-spec/steps/.
 */
export interface StepKind<S = PipelineStep> {
  /** The spec field that marks a step of this kind (`model`). */
  readonly key: StepKindKey;
  /** Called once before the pipeline's first await: registers what the kind's steps receive (signals, updates). */
  open(): void;
  /** The ids of the steps whose outputs this step reads: it cannot start before they completed. */
  dependencies(step: S): string[];
  /** True when the check before anything is paid (preflight) has something of this step to look at. */
  preflights(step: S): boolean;
  /** The kind's own fields of the step's row in the summary (a paid job: its model). */
  summary(step: S): StepKindFields;
  /**
   * What running the step with `input` would cost, credits (a graph's budget is checked against
   * everything it can still start before its first submit); absent: the kind costs nothing.
   */
  quote?(step: S, input: Record<string, unknown>): Promise<number>;
  /** Runs the step with its input resolved; resolves with how it ended, throws when it failed. */
  run(step: S, run: StepRun): Promise<StepOutcome>;
  /** A resumed run (`reelflow resume`): the row of a step an earlier run completed, carried instead of run. */
  resume(step: S, carried: CarriedStep): Pick<StepSummary, 'status' | 'carriedFrom' | 'output'>;
  /** The pipeline ends: nothing its steps prepared to start without the workflow may start now. */
  revokeAhead(): Promise<void>;
  /** Resolves once its steps' ledger is final (charges learned after their results). */
  settled(): Promise<void>;
}

/** How a step that did not fail ended: `completed` with its result, or cancelled at the service. */
export type StepOutcome = { status: 'completed' | 'completed-too-late'; result: StepOutput } | { status: 'cancelled' };

/** What a running step shows of itself: its part of the step row, and whether it holds the workflow task open. */
export interface StepProgress {
  view(): Partial<StepSummary>;
  /** True once the step's work was handed over (a job: its submit was answered). */
  submitted(): boolean;
  /** True while a local activity of the step keeps the current workflow task open. */
  holdsTaskOpen(): boolean;
}

/** What the pipeline gives a step to run with. */
export interface StepRun {
  /** The step's place in the spec, and its key `<pipeline>/job/<step>` (an item's: `<pipeline>/job/<step>/<item>`). */
  readonly index: number;
  readonly stepKey: string;
  /** A fan-out step (`each`): the item this run is for, its place and value (its `$item`s are resolved in `input`). */
  readonly item?: { readonly index: number; readonly value: Readonly<Record<string, unknown>> };
  /** The step's input, references to earlier outputs resolved. */
  readonly input: Record<string, unknown>;
  readonly pipeline: PipelineWorkflowInput;
  /** How the worker runs the pipeline's submits (from the check before anything is paid). */
  readonly submitAs?: SubmitAs;
  /** Credits the pipeline may still spend; undefined without a budget. */
  budgetRemaining(): number | undefined;
  /** Told at the start and on every change of the step's progress. */
  observe(progress: StepProgress): void;
  /** True once an operator asked the step to end a backoff now (`retryStep`). */
  wakeBackoff(): boolean;
}
