import { CancellationScope, setCurrentDetails, setHandler, upsertSearchAttributes } from '@temporalio/workflow';
import {
  SEARCH_ATTRIBUTES,
  cancelPipelineUpdate,
  cancelStepUpdate,
  raiseBudgetUpdate,
  retryStepUpdate,
} from '../definitions';
import { checkCancelPipeline, checkCancelStep, checkRaiseBudget, checkRetryStep } from '../operator-updates';
import type { PipelineSummary } from '../pipeline-types';
import { currentDetailsMarkdown } from '../../spec/ui-text';
import { whenChanged } from './publish';
import type { StepRun } from './step-run';

/**
 * The operator console of a pipeline: the live "current details" step table and the
 * search attributes the saved views use, and the updates an operator sends from the Temporal UI or
 * `reelflow cancel --step / budget / retry` (validators: ../operator-updates.ts). Holds what the
 * updates asked for; the pipeline's loop and its steps read it.
 */
export class OperatorConsole {
  /** Steps an operator cancelled, with the reason. */
  private readonly cancelled = new Map<string, string>();
  /** A cancel of the whole pipeline (every step not over yet). */
  private pipelineCancel: string | undefined;
  private readonly retryNow = new Set<string>();
  private running: { stepId: string; scope: CancellationScope; run: StepRun; netBefore: number } | undefined;

  constructor(
    private readonly summary: PipelineSummary,
    private readonly publish: (summary: PipelineSummary) => void,
    private readonly searchAttributes: boolean,
  ) {}

  /** Its search attributes, upserted only when they changed (each upsert is a command and a visibility write). */
  private readonly upsertAttributes = whenChanged(upsertSearchAttributes);

  /** Registers the operator updates (each with its validator). */
  register(): void {
    const summary = this.summary;
    setHandler(
      cancelStepUpdate,
      (args) => {
        const step = checkCancelStep(summary, args);
        const reason = args.reason?.trim() || 'no reason given';
        this.cancelled.set(step.id, reason);
        const running = this.running?.stepId === step.id;
        if (running) this.running?.scope.cancel();
        this.publish(summary);
        return {
          ok: true,
          message: running
            ? `cancelling step ${step.id}: its job is cancelled at the service and its terminal state awaited; no later step starts`
            : `step ${step.id} will not start; the pipeline stops before it`,
        };
      },
      { validator: (args) => void checkCancelStep(summary, args) },
    );
    setHandler(
      cancelPipelineUpdate,
      (args) => {
        checkCancelPipeline(summary, args);
        this.pipelineCancel = args?.reason?.trim() || 'no reason given';
        this.running?.scope.cancel();
        this.publish(summary);
        return {
          ok: true,
          message: `cancelling pipeline ${summary.name}: the step in flight is cancelled at the service; no later step starts`,
        };
      },
      { validator: (args) => checkCancelPipeline(summary, args) },
    );
    setHandler(
      raiseBudgetUpdate,
      (args) => {
        const credits = checkRaiseBudget(summary, args);
        const before = summary.budgetCredits;
        summary.budgetCredits = credits;
        // A step still to be checked (or resubmitted) sees the new budget too.
        if (this.running) this.running.run.budgetRemaining = credits - this.running.netBefore;
        this.publish(summary);
        return {
          ok: true,
          message: `budget ${before === null ? 'set' : `raised from ${before}`} to ${credits} credits (${summary.ledger.net} spent)`,
        };
      },
      { validator: (args) => void checkRaiseBudget(summary, args) },
    );
    setHandler(
      retryStepUpdate,
      (args) => {
        const step = checkRetryStep(summary, args);
        this.retryNow.add(step.id);
        return { ok: true, message: `step ${step.id} resubmits now instead of after its backoff` };
      },
      { validator: (args) => void checkRetryStep(summary, args) },
    );
  }

  /** The reason a step must not run or go on (operator cancel of the step or the pipeline), if any. */
  cancelReason(stepId: string): string | undefined {
    return this.cancelled.get(stepId) ?? this.pipelineCancel;
  }

  /** Runs a step in its own cancellation scope, so that a cancel update stops just this step's job. */
  async runStep<T>(run: StepRun, netBefore: number, body: () => Promise<T>): Promise<T> {
    const scope = new CancellationScope();
    this.running = { stepId: run.stepId, scope, run, netBefore };
    run.wakeBackoff = () => this.retryNow.delete(run.stepId);
    try {
      return await scope.run(body);
    } finally {
      this.running = undefined;
    }
  }

  /** Current details (markdown step table) and the saved views' search attributes. */
  show(summary: PipelineSummary): void {
    setCurrentDetails(currentDetailsMarkdown(summary, Date.now()));
    if (!this.searchAttributes) return;
    this.upsertAttributes([
      { key: SEARCH_ATTRIBUTES.pipeline, value: summary.name },
      { key: SEARCH_ATTRIBUTES.models, value: [...new Set(summary.steps.map((s) => s.model))] },
      { key: SEARCH_ATTRIBUTES.overBudget, value: summary.steps.some((s) => s.status === 'budget-exceeded') },
    ]);
  }
}
