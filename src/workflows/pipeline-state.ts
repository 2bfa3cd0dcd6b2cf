import {
  CancellationScope,
  CancelledFailure,
  condition,
  setCurrentDetails,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { FailureType } from '../contract/failure-types';
import { currentDetailsMarkdown } from '../pipeline-spec/ui-text';
import { stepKeyOf } from './definitions';
import { workflowFailure } from './errors';
import { checkCancelPipeline, checkCancelStep, checkRaiseBudget, checkRetryStep } from './operator-updates';
import type {
  CancelPipelineArgs,
  CancelStepArgs,
  OperatorAnswer,
  PipelineStatus,
  PipelineSummary,
  PipelineWorkflowInput,
  RaiseBudgetArgs,
  ResumedFromSummary,
  ResumeFrom,
  RetryStepArgs,
  StepItemSummary,
  StepSummary,
} from './pipeline-types';
import { memoOf, searchAttributesOf, stateOperatorsFilterOn, whenChanged } from './pipeline/publish';
import type { WorkflowJobs } from './steps/job/types';
import type { StepProgress } from './steps/kind';
import { kindOf } from './steps/registry';
import { graphRowOf, itemOutputsOf, showWaits } from './pipeline/graph-view';

/** What the pipeline keeps of one step beside what its kind runs: its own fields of the step row. */
type StepOwnState = Pick<
  StepSummary,
  'status' | 'input' | 'output' | 'archived' | 'archiveError' | 'error' | 'carriedFrom' | 'startedAt' | 'finishedAt'
>;
type StepState = StepOwnState & { preflight?: true; progress?: StepProgress; items?: ItemState[] };
/** What the pipeline keeps of one item of a fan-out step. */
type ItemOwnState = Pick<StepItemSummary, 'status' | 'output' | 'archived' | 'archiveError' | 'error' | 'carriedFrom'>;
type ItemState = ItemOwnState & { progress?: StepProgress };

/**
 * The one owner of a pipeline's state: its methods (the operator updates among them) are the only
 * writers; the summary, memo, search attributes and current details are computed from it and
 * published once per workflow task.
 */
export class PipelineState {
  private status: PipelineStatus = 'running';
  private currentStep: string | null = null;
  private budgetCredits: number | null;
  private error?: string;
  private readonly steps: StepState[];
  /** Steps an operator cancelled, with the reason; `pipelineCancel`: every step not over yet. */
  private readonly cancels = new Map<string, string>();
  private pipelineCancel?: string;
  private readonly retryNow = new Set<string>();
  /** The cancellation scope of each step that runs now (one at a time in version 1; a graph runs several). */
  private readonly running = new Map<string, CancellationScope>();
  private version = 0;
  private published = -1;
  private readonly upsertAttributes = whenChanged(upsertSearchAttributes);
  private readonly upsertMemo = whenChanged(upsertMemo);
  private filteredState?: string;
  private localActivities = 0;

  constructor(
    private readonly input: PipelineWorkflowInput,
    private readonly jobs: WorkflowJobs,
    /** Told each summary that is published (a batch item keeps the last one for its report). */
    private readonly onPublish?: (summary: PipelineSummary) => void,
  ) {
    this.budgetCredits = input.spec.budgetCredits ?? null;
    this.steps = input.spec.steps.map(() => ({ status: 'pending' }));
    void CancellationScope.nonCancellable(() => this.publishEachTask());
  }

  summary(): PipelineSummary {
    const { spec, resume } = this.input;
    const steps = spec.steps.map((step, index): StepSummary => {
      const { progress, preflight, items, ...own } = this.steps[index] as StepState;
      // The kind's own fields (a job's model, an op's name, a gate's view) make it one of StepSummary's rows.
      const row = {
        id: step.id,
        ...kindOf(step).summary(step),
        stepKey: stepKeyOf(spec.name, step.id),
        requestIds: [],
        attempts: 0,
        quoted: 0,
        charged: 0,
        refunded: 0,
        polls: 0,
        ...progress?.view(),
        ...(preflight ? { phase: 'preflight' } : {}),
        ...own,
      } as StepSummary;
      return spec.version === 2 ? graphRowOf(step, row, items) : row;
    });
    if (spec.version === 2) showWaits(spec.steps, steps);
    const sum = (field: 'quoted' | 'charged' | 'refunded') => steps.reduce((total, s) => total + s[field], 0);
    const ledger = { quoted: sum('quoted'), charged: sum('charged'), refunded: sum('refunded'), net: 0 };
    ledger.net = ledger.charged - ledger.refunded;
    const { abandoned, ambiguous } = this.jobs.recovery;
    return {
      name: spec.name,
      status: this.status,
      currentStep: this.currentStep,
      budgetCredits: this.budgetCredits,
      ledger,
      steps,
      outputs: Object.fromEntries(
        steps.flatMap((s) => (s.status === 'completed' && s.output ? [[s.id, s.output]] : [])),
      ),
      ...(spec.version === 2 ? { version: 2, itemOutputs: itemOutputsOf(steps) } : {}),
      ...(this.error !== undefined ? { error: this.error } : {}),
      events: this.jobs.events.counts(steps.flatMap((s) => s.requestIds)),
      ...(abandoned.length || ambiguous.length ? { recovery: { abandoned, ambiguous } } : {}),
      ...(resume ? { resumedFrom: resumedFromOf(resume) } : {}),
    };
  }

  /** Credits the running step may still spend; undefined without a budget. */
  budgetRemaining(): number | undefined {
    return this.budgetCredits === null ? undefined : this.budgetCredits - this.summary().ledger.net;
  }

  /** The reason a step must not run or go on (operator cancel of the step or the pipeline), if any. */
  cancelReason(stepId: string): string | undefined {
    return this.cancels.get(stepId) ?? this.pipelineCancel;
  }

  /** Reports a change: the next publish (at the end of this workflow task) shows it. */
  changed(): void {
    this.version += 1;
  }

  /** Steps whose literal inputs are being checked before anything is paid (none: the check is over). */
  preflighting(indices: readonly number[]): void {
    this.steps.forEach((step, index) => (indices.includes(index) ? (step.preflight = true) : delete step.preflight));
    this.changed();
  }

  startStep(index: number, stepId: string): void {
    this.currentStep = stepId;
    this.update(index, { status: 'running', startedAt: Date.now() });
  }

  /** A resumed run: the step completed (and was paid) in an earlier run; `row` is what its kind carries of it. */
  carry(index: number, stepId: string, row: Partial<StepOwnState>): void {
    this.currentStep = stepId;
    this.update(index, row);
  }

  /** Writes what the pipeline keeps of step `index` (status, input, error, output, archive). */
  update(index: number, patch: Partial<StepOwnState>): void {
    Object.assign(this.steps[index] as StepState, patch);
    this.changed();
  }

  /** The observer of step `index`: the step's changes are the pipeline's; `submitted` once its work was handed over. */
  observeStep(index: number, submitted: () => void): (progress: StepProgress) => void {
    return (progress) => {
      (this.steps[index] as StepState).progress = progress;
      if (progress.submitted()) submitted();
      this.changed();
    };
  }

  /** Runs step `stepId` in its own cancellation scope, so that a cancel update stops just this step. */
  async runStep<T>(stepId: string, body: () => Promise<T>): Promise<T> {
    const scope = new CancellationScope();
    this.running.set(stepId, scope);
    try {
      return await scope.run(body);
    } finally {
      this.running.delete(stepId);
    }
  }

  /** Cancels every step that runs now (a graph's first failure: its other branches stop, their jobs cancelled). */
  cancelRunning(): void {
    for (const scope of this.running.values()) scope.cancel();
  }

  /** A fan-out step starts: `count` items, each pending. */
  startItems(index: number, count: number): void {
    (this.steps[index] as StepState).items = Array.from({ length: count }, () => ({ status: 'pending' }));
    this.changed();
  }

  /** Writes what the pipeline keeps of item `item` of step `index`. */
  updateItem(index: number, item: number, patch: Partial<ItemOwnState>): void {
    Object.assign((this.steps[index] as StepState).items?.[item] ?? {}, patch);
    this.changed();
  }

  /** The observer of item `item` of step `index`, as observeStep is a step's. */
  observeItem(index: number, item: number): (progress: StepProgress) => void {
    return (progress) => {
      const state = (this.steps[index] as StepState).items?.[item];
      if (state) state.progress = progress;
      this.changed();
    };
  }

  /** True once an operator asked step `stepId` to resubmit now instead of after its backoff. */
  wakeBackoff(stepId: string): () => boolean {
    return () => this.retryNow.delete(stepId);
  }

  /** Ends the pipeline completed; returns its summary. */
  complete(): PipelineSummary {
    this.currentStep = null;
    this.status = 'completed';
    return this.publish();
  }

  /** Ends the pipeline `status` and throws `failure` (or one made from the final summary); steps not run: `skipped`. */
  stop(status: 'failed' | 'cancelled' | 'rejected', failure: Error | ((summary: PipelineSummary) => Error)): never {
    this.status = status;
    for (const step of this.steps) if (step.status === 'pending') step.status = 'skipped';
    const summary = this.summary();
    const error = typeof failure === 'function' ? failure(summary) : failure;
    if (!(error instanceof CancelledFailure)) summary.error = this.error = error.message;
    this.publish();
    throw error;
  }

  /** Ends the pipeline `status` with a non-retryable failure of `type` that carries the final summary as its first detail. */
  fail(type: FailureType, message: string, status: 'failed' | 'cancelled' | 'rejected' = 'failed'): never {
    return this.stop(status, (summary) => workflowFailure(type, message, summary));
  }

  /** Runs `body`, a local activity, holding publishing back: it keeps the workflow task open across activations. */
  async inLocalActivity<T>(body: () => Promise<T>): Promise<T> {
    this.localActivities += 1;
    try {
      return await body();
    } finally {
      this.localActivities -= 1;
    }
  }

  /** True while a local activity runs in this workflow task (the check, or a submit run as one). */
  private taskHeldOpen(): boolean {
    if (this.localActivities > 0) return true;
    return this.steps.some(
      (step) =>
        (step.status === 'running' && step.progress?.holdsTaskOpen()) ||
        step.items?.some((item) => item.progress?.holdsTaskOpen()),
    );
  }

  private async publishEachTask(): Promise<void> {
    for (;;) {
      await condition(() => this.version !== this.published && !this.taskHeldOpen());
      // Let every coroutine this task woke run to its next wait first: publish what the task ends with.
      for (let seen = -1; seen !== this.version;) {
        seen = this.version;
        await condition(() => true);
      }
      // What the task woke may have been a local activity's start (the check, a submit): wait for it.
      if (!this.taskHeldOpen()) this.publish();
    }
  }

  /**
   * Shows the summary outside: current details (no history event) on every change; search attributes
   * and memo (commands) only when what operators filter on moved, or the recovery record changed.
   */
  private publish(): PipelineSummary {
    const summary = this.summary();
    this.published = this.version;
    setCurrentDetails(currentDetailsMarkdown(summary, Date.now()));
    const attributes = this.input.publishSearchAttributes !== false;
    const filtered = stateOperatorsFilterOn(summary);
    const moved = filtered !== this.filteredState;
    this.filteredState = filtered;
    if (attributes && moved) this.upsertAttributes(searchAttributesOf(summary));
    if (!attributes ? moved : summary.recovery !== undefined) this.upsertMemo(memoOf(summary, attributes));
    this.onPublish?.(summary);
    return summary;
  }

  cancelStep(args: CancelStepArgs): OperatorAnswer {
    const step = checkCancelStep(this.summary(), args);
    this.cancels.set(step.id, args.reason?.trim() || 'no reason given');
    const running = this.running.get(step.id);
    running?.cancel();
    this.changed();
    return answer(
      running
        ? `cancelling step ${step.id}: its job is cancelled at the service and its terminal state awaited; no later step starts`
        : `step ${step.id} will not start; the pipeline stops before it`,
    );
  }

  cancelPipeline(args: CancelPipelineArgs): OperatorAnswer {
    checkCancelPipeline(this.summary(), args);
    this.pipelineCancel = args?.reason?.trim() || 'no reason given';
    this.cancelRunning();
    this.changed();
    const name = this.input.spec.name;
    return answer(`cancelling pipeline ${name}: the step in flight is cancelled at the service; no later step starts`);
  }

  raiseBudget(args: RaiseBudgetArgs): OperatorAnswer {
    const summary = this.summary();
    const credits = checkRaiseBudget(summary, args);
    const before = this.budgetCredits;
    // A step still to be checked (or resubmitted) sees the new budget too: it reads budgetRemaining().
    this.budgetCredits = credits;
    this.changed();
    const raised = before === null ? 'set' : `raised from ${before}`;
    return answer(`budget ${raised} to ${credits} credits (${summary.ledger.net} spent)`);
  }

  retryStep(args: RetryStepArgs): OperatorAnswer {
    const step = checkRetryStep(this.summary(), args);
    this.retryNow.add(step.id);
    return answer(`step ${step.id} resubmits now instead of after its backoff`);
  }
}

/** An operator update's answer. */
function answer(message: string): OperatorAnswer {
  return { ok: true, message };
}

/** What a resumed run shows of the run it resumes. */
function resumedFromOf({ steps, ...origin }: ResumeFrom): ResumedFromSummary {
  return { ...origin, carriedSteps: Object.keys(steps) };
}
