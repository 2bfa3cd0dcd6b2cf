import { CancellationScope, CancelledFailure } from '@temporalio/workflow';
import type { SubmitAs } from '../../activities';
import { FAILURE_TYPES } from '../../contract/failure-types';
import { stepKeyOf } from '../../contract/workflow-names';
import { ReferenceResolutionError } from '../../pipeline-spec/errors';
import { dependenciesOf, topologicalOrder } from '../../pipeline-spec/graph';
import { resolveItemReferences } from '../../pipeline-spec/items';
import { resolveReferences } from '../../pipeline-spec/references';
import type { PipelineStep } from '../../pipeline-spec/spec';
import type { PipelineState } from '../pipeline-state';
import type { PipelineSummary, PipelineWorkflowInput, StepOutput } from '../pipeline-types';
import type { StepKind, StepOutcome, StepProgress } from '../steps/kind';
import { kindOf, stepKinds } from '../steps/registry';
import { archiveOutputs, archivedOrUrl } from './archive';
import { GraphBudget } from './graph-budget';
import { endAfterStepError } from './step-error';

/**
 * The graph runner of a version-2 spec: every step waits for its dependencies (the steps its
 * references read and those `after` names), so independent steps run at once in this one workflow;
 * a fan-out step (`each`) runs one job per item at once, each with its own key. The first failure
 * cancels every running branch (each job at the service, refunded) and starts nothing more.
 */

/** Why a graph stops: the first node that failed, was cancelled or could not resolve its input. */
type Halt =
  | { index: number; stepId: string; kind: 'error'; error: unknown }
  | { index: number; stepId: string; kind: 'cancelled' }
  | { index: number; stepId: string; kind: 'unresolved'; message: string };

/** How one node (or item) ended: completed with its result(s), or the halt it caused. */
type NodeEnd = { status: 'completed'; result: StepOutput | StepOutput[] } | { status: 'halted'; halt: Halt };

/** Runs a version-2 spec's graph after the check before anything is paid; resolves with the final summary. */
export async function runGraph(
  input: PipelineWorkflowInput,
  state: PipelineState,
  submitAs: SubmitAs | undefined,
): Promise<PipelineSummary> {
  return new GraphRun(input, state, submitAs).run();
}

class GraphRun {
  private readonly finished = new Map<string, Promise<boolean>>();
  private readonly archives = new Map<string, Promise<unknown>>();
  private readonly budget: GraphBudget;
  private halt?: Halt;

  constructor(
    private readonly input: PipelineWorkflowInput,
    private readonly state: PipelineState,
    private readonly submitAs: SubmitAs | undefined,
  ) {
    this.budget = new GraphBudget(input, state);
  }

  async run(): Promise<PipelineSummary> {
    await this.budget.checkAll();
    // In dependency order, so that each node finds the promises of the nodes it waits for.
    for (const step of topologicalOrder(this.input.spec.steps)) this.finished.set(step.id, this.node(step));
    await Promise.all(this.finished.values());
    await this.closing();
    if (CancellationScope.current().consideredCancelled)
      this.state.stop('cancelled', new CancelledFailure('pipeline cancelled'));
    if (this.halt) this.end(this.halt);
    return this.state.complete();
  }

  /** Nothing prepared may start now; archive copies and the ledger's late quotes are awaited. */
  private async closing(): Promise<void> {
    for (const kind of stepKinds()) await kind.revokeAhead();
    await Promise.all(this.archives.values());
    for (const kind of stepKinds()) await kind.settled();
  }

  /** The first halt wins; every running branch is cancelled (each job at the service). */
  private stop(halt: Halt): void {
    this.halt ??= halt;
    this.state.cancelRunning();
  }

  /** True when no further node may start: a halt, a cancel of the workflow, or an operator's of this step. */
  private halted(stepId: string): boolean {
    return (
      this.halt !== undefined ||
      CancellationScope.current().consideredCancelled ||
      this.state.cancelReason(stepId) !== undefined
    );
  }

  /** One node: waits for its dependencies, then runs (or carries) it; resolves true once it completed. */
  private async node(step: PipelineStep): Promise<boolean> {
    const { spec } = this.input;
    const index = spec.steps.indexOf(step);
    const kind = kindOf(step);
    const dependencies = [...new Set([...kind.dependencies(step), ...dependenciesOf(step)])];
    const done = await Promise.all(dependencies.map((id) => this.finished.get(id) ?? Promise.resolve(false)));
    if (!done.every(Boolean)) return false;
    if (this.halted(step.id)) {
      if (this.state.cancelReason(step.id) !== undefined) this.stop({ index, stepId: step.id, kind: 'cancelled' });
      return false;
    }
    const carried = this.input.resume?.steps[step.id];
    if (carried && !step.each) {
      this.state.carry(index, step.id, kind.resume(step, carried));
      return true;
    }
    this.state.startStep(index, step.id);
    // A reference reads an output's archived copy once there (it keeps the service URL).
    await Promise.all(dependencies.map((id) => this.archives.get(id)));
    const ended = await this.state.runStep(step.id, () => this.runNode(step, index, kind));
    if (ended.status === 'halted') {
      this.stop(ended.halt);
      return false;
    }
    this.state.update(index, { status: 'completed', finishedAt: Date.now() });
    if (!Array.isArray(ended.result)) {
      const result = ended.result;
      this.archives.set(
        step.id,
        archiveOutputs(spec, index, result).then((copies) => this.state.update(index, copies)),
      );
    }
    return true;
  }

  /** Resolves the node's references and runs it: once, or once per item. */
  private async runNode(step: PipelineStep, index: number, kind: StepKind): Promise<NodeEnd> {
    let resolved: Record<string, unknown>;
    try {
      const summary = this.state.summary();
      const outputs = { ...summary.outputs, ...summary.itemOutputs };
      resolved = resolveReferences(step.input, outputs, (value) => archivedOrUrl(summary, value));
    } catch (error) {
      if (!(error instanceof ReferenceResolutionError)) throw error;
      this.state.update(index, { status: 'failed', error: error.message, finishedAt: Date.now() });
      return { status: 'halted', halt: { index, stepId: step.id, kind: 'unresolved', message: error.message } };
    }
    if (step.each) return this.fanOut(step, index, kind, resolved, step.each);
    this.state.update(index, { input: resolved });
    const unit = step.id;
    const outcome = await this.runKind(
      step,
      index,
      kind,
      resolved,
      unit,
      this.state.observeStep(index, () => {}),
    );
    if (isDone(outcome)) return { status: 'completed', result: outcome.result };
    const error = outcome.status === 'error' ? { error: messageOf(outcome.error) } : {};
    this.state.update(index, {
      status: outcome.status === 'error' ? 'failed' : 'cancelled',
      ...error,
      finishedAt: Date.now(),
    });
    return { status: 'halted', halt: this.haltOf(index, step.id, outcome) };
  }

  /** Runs one unit of work through its kind; a throw is returned as `error`, so that siblings can be told. */
  private runKind(
    step: PipelineStep,
    index: number,
    kind: StepKind,
    input: Record<string, unknown>,
    unit: string,
    observe: (progress: StepProgress) => void,
    item?: { index: number; value: Record<string, unknown> },
  ): Promise<StepOutcome | { status: 'error'; error: unknown }> {
    const { spec } = this.input;
    return kind
      .run(step, {
        index,
        stepKey: stepKeyOf(spec.name, step.id, item?.index),
        input,
        pipeline: this.input,
        submitAs: this.submitAs,
        ...(item ? { item } : {}),
        budgetRemaining: this.budget.remainingFor(unit),
        observe: this.budget.observing(unit, observe),
        wakeBackoff: this.state.wakeBackoff(step.id),
      })
      .catch((error: unknown) => ({ status: 'error', error }) as const)
      .finally(() => this.budget.started(unit));
  }

  private haltOf(
    index: number,
    stepId: string,
    outcome: { status: 'cancelled' } | { status: 'error'; error: unknown },
  ) {
    return outcome.status === 'error'
      ? ({ index, stepId, kind: 'error', error: outcome.error } as const)
      : ({ index, stepId, kind: 'cancelled' } as const);
  }

  /**
   * A fan-out step: one run per item, at once. `onFailure: fail` (default): the first failed item
   * cancels its running siblings and the step fails; `continue`: the step keeps its successes.
   */
  private async fanOut(
    step: PipelineStep,
    index: number,
    kind: StepKind,
    resolved: Record<string, unknown>,
    each: readonly Record<string, unknown>[],
  ): Promise<NodeEnd> {
    const carried = this.input.resume?.steps[step.id]?.items ?? {};
    this.state.startItems(index, each.length);
    const scopes = each.map(() => new CancellationScope());
    const failFast = (step.onFailure ?? 'fail') === 'fail';
    let first: { index: number; outcome: { status: 'cancelled' } | { status: 'error'; error: unknown } } | undefined;
    const ends = await Promise.all(
      each.map(async (value, i): Promise<StepOutput | undefined> => {
        const before = carried[i];
        if (before) {
          this.state.updateItem(index, i, { ...kind.resume(step, before), status: 'completed' });
          return before.output;
        }
        if (failFast && first) {
          this.state.updateItem(index, i, { status: 'skipped' });
          return undefined;
        }
        const outcome = await this.item(step, index, kind, resolved, i, value, scopes[i] as CancellationScope);
        if (isDone(outcome)) return outcome.result;
        if (!first && !(outcome.status === 'cancelled' && scopes[i]?.consideredCancelled && failFast)) {
          first = { index: i, outcome };
          if (failFast) scopes.forEach((scope, j) => j !== i && scope.cancel());
        }
        return undefined;
      }),
    );
    const results = ends.filter((result): result is StepOutput => result !== undefined);
    const failed = ends.flatMap((result, i) => (result ? [] : [i]));
    if (failed.length === 0 || (!failFast && results.length > 0)) {
      if (failed.length > 0)
        this.state.update(index, { error: `item(s) ${failed.join(', ')} failed; kept the others` });
      return { status: 'completed', result: results };
    }
    const halt = first
      ? this.haltOf(index, step.id, first.outcome)
      : ({ index, stepId: step.id, kind: 'cancelled' } as const);
    if (halt.kind === 'cancelled') this.state.update(index, { status: 'cancelled', finishedAt: Date.now() });
    return { status: 'halted', halt };
  }

  /** One item of a fan-out step in its own scope: its `$item`s resolved, its own key, its own row. */
  private async item(
    step: PipelineStep,
    index: number,
    kind: StepKind,
    resolved: Record<string, unknown>,
    i: number,
    value: Record<string, unknown>,
    scope: CancellationScope,
  ): Promise<StepOutcome | { status: 'error'; error: unknown }> {
    let input: Record<string, unknown>;
    try {
      input = resolveItemReferences(resolved, value);
    } catch (error) {
      this.state.updateItem(index, i, { status: 'failed', error: (error as Error).message });
      return { status: 'error', error };
    }
    this.state.updateItem(index, i, { status: 'running' });
    const unit = `${step.id}/${i}`;
    const observe = this.state.observeItem(index, i);
    const outcome = await scope.run(() => this.runKind(step, index, kind, input, unit, observe, { index: i, value }));
    if (isDone(outcome)) {
      this.state.updateItem(index, i, { status: outcome.status, output: outcome.result });
      const copied = archiveOutputs(this.input.spec, index, outcome.result, i);
      this.archives.set(
        unit,
        copied.then((copies) => this.state.updateItem(index, i, copies)),
      );
    } else if (outcome.status === 'cancelled') {
      this.state.updateItem(index, i, { status: 'cancelled' });
    } else {
      this.state.updateItem(index, i, { status: 'failed', error: messageOf(outcome.error) });
    }
    return outcome;
  }

  /** Ends the pipeline after `halt`, as the version-1 loop ends after a failed or cancelled step. */
  private end(halt: Halt): never {
    const state: PipelineState = this.state;
    const name = this.input.spec.name;
    const reason = state.cancelReason(halt.stepId);
    if (halt.kind !== 'error' && reason !== undefined) {
      const { status } = state.summary().steps[halt.index] ?? {};
      state.update(halt.index, {
        ...(status === 'pending' || status === 'running' ? { status: 'cancelled' } : {}),
        error: `cancelled by an operator: ${reason}`,
      });
      state.fail(
        FAILURE_TYPES.stepCancelled,
        `pipeline ${name}: step ${halt.stepId} was cancelled by an operator (${reason}); no later step was started`,
        'cancelled',
      );
    }
    if (halt.kind === 'error') endAfterStepError(state, halt.index, halt.stepId, halt.error);
    if (halt.kind === 'unresolved') state.fail(FAILURE_TYPES.stepFailed, `step ${halt.stepId}: ${halt.message}`);
    return state.fail(
      FAILURE_TYPES.stepCancelled,
      `pipeline ${name}: step ${halt.stepId} was cancelled outside the pipeline (cancelled); no later step was started`,
    );
  }
}

/** What a failure says: its cause's message when it wraps one (an activity's failure), else its own. */
function messageOf(error: unknown): string {
  const cause = (error as { cause?: unknown } | undefined)?.cause;
  if (cause instanceof Error) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** True when a unit of work ended with its result (`completed`, or `completed-too-late`: paid and kept). */
function isDone(
  outcome: StepOutcome | { status: 'error'; error: unknown },
): outcome is Extract<StepOutcome, { result: unknown }> {
  return outcome.status === 'completed' || outcome.status === 'completed-too-late';
}
