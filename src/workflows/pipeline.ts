import { CancellationScope, CancelledFailure, isCancellation, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ModelId, ModelInputs } from '../contract';
import { FAILURE_TYPES } from '../contract/failure-types';
import { ReferenceResolutionError } from '../spec/errors';
import { forEachReference, resolveReferences } from '../spec/references';
import {
  cancelPipelineUpdate,
  cancelStepUpdate,
  pipelineProgressQuery,
  raiseBudgetUpdate,
  retryStepUpdate,
  stepKeyOf,
} from './definitions';
import { checkCancelPipeline, checkCancelStep, checkRaiseBudget, checkRetryStep } from './operator-updates';
import { PipelineState } from './pipeline-state';
import type { PipelineSummary, PipelineWorkflowInput } from './pipeline-types';
import { archiveOutputs, archivedOrUrl } from './steps/archive';
import { reportingToBatch } from './batch-item';
import { checkBeforeAnyPay } from './steps/preflight';
import { firstApplicationFailure } from './steps/publish';
import {
  chargesSettled,
  idempotencyKeyFor,
  revokePreparedSubmits,
  runServiceJob,
  workflowJobs,
  type ServiceJobOutcome,
} from './steps/service-job';
import type { PreparedChain, PreparedStep, SubmitAs } from '../activities';

/** How one step of a pipeline ended. */
type StepOutcome = ServiceJobOutcome | { status: 'error'; error: unknown };

/**
 * A pipeline: its steps run in order inside this one workflow, each one paid job of the service
 * (`runServiceJob`), its input resolved from earlier outputs. Cancelling it cancels the job in
 * flight, awaits its terminal state and starts no later step.
 */
export async function pipelineWorkflow(input: PipelineWorkflowInput): Promise<PipelineSummary> {
  if (input.batch)
    return reportingToBatch(input.batch.workflowId, input.spec.name, workflowInfo().workflowId, (observe) =>
      runPipeline(input, observe),
    );
  return runPipeline(input);
}

/** The progress query and the operator's updates (cancel a step or the pipeline, raise the budget, retry a step). */
function answerOperators(state: PipelineState): void {
  setHandler(pipelineProgressQuery, () => state.summary());
  setHandler(cancelStepUpdate, (args) => state.cancelStep(args), {
    validator: (args) => void checkCancelStep(state.summary(), args),
  });
  setHandler(cancelPipelineUpdate, (args) => state.cancelPipeline(args), {
    validator: (args) => checkCancelPipeline(state.summary(), args),
  });
  setHandler(raiseBudgetUpdate, (args) => state.raiseBudget(args), {
    validator: (args) => void checkRaiseBudget(state.summary(), args),
  });
  setHandler(retryStepUpdate, (args) => state.retryStep(args), {
    validator: (args) => void checkRetryStep(state.summary(), args),
  });
}

async function runPipeline(
  input: PipelineWorkflowInput,
  observe?: (summary: PipelineSummary) => void,
): Promise<PipelineSummary> {
  const { spec } = input;
  // The jobs' signal handlers are set before the first await: an event that overtakes its submit's answer is kept.
  const state: PipelineState = new PipelineState(input, workflowJobs(), observe);
  answerOperators(state);

  const submitAs = await checkBeforeAnyPay(input, state);

  // Archive copies start once the next submit was answered (never competing with it); awaited only at the close.
  const archives = new Map<string, Promise<void>>();
  const held: (() => void)[] = [];
  const release = () => held.splice(0).forEach((start) => start());
  const closing = async () => {
    release();
    // A step the bridge may submit once the job before it completes must not be submitted now (or is cancelled).
    await revokePreparedSubmits();
    await Promise.all(archives.values());
    // The ledger quotes that ran beside later steps (results without a charge) close the ledger.
    await chargesSettled();
  };

  /**
   * No step starts, or goes on, after a cancel. An operator's fails the pipeline with StepCancelled
   * naming the reason: an update cannot make Temporal record a cancellation.
   */
  const endIfCancelled = async (index: number, stepId: string) => {
    if (!CancellationScope.current().consideredCancelled && state.cancelReason(stepId) === undefined) return;
    await closing();
    if (CancellationScope.current().consideredCancelled)
      state.stop('cancelled', new CancelledFailure('pipeline cancelled'));
    const reason = state.cancelReason(stepId) as string;
    const { status } = state.summary().steps[index] ?? {};
    state.update(index, {
      ...(status === 'pending' ? { status: 'cancelled' } : {}),
      error: `cancelled by an operator: ${reason}`,
    });
    state.fail(
      FAILURE_TYPES.stepCancelled,
      `pipeline ${spec.name}: step ${stepId} was cancelled by an operator (${reason}); no later step was started`,
      'cancelled',
    );
  };

  for (const [index, step] of spec.steps.entries()) {
    const carried = input.resume?.steps[step.id];
    await endIfCancelled(index, step.id);
    if (carried) {
      state.carry(index, step.id, carried);
      continue;
    }
    state.startStep(index, step.id);
    // The service still serves the previous step's output: only a step reading an older one waits for its copy.
    const older: Promise<void>[] = [];
    forEachReference(step.input, ({ $from }) => {
      if ($from !== spec.steps[index - 1]?.id) older.push(archives.get($from) ?? Promise.resolve());
    });
    if (older.length > 0) await Promise.all(older);
    let resolved: Record<string, unknown>;
    try {
      // An earlier output is read through its archived copy once there (it keeps the service URL).
      const summary = state.summary();
      resolved = resolveReferences(step.input, summary.outputs, (value) => archivedOrUrl(summary, value));
    } catch (error) {
      if (!(error instanceof ReferenceResolutionError)) throw error;
      state.update(index, { status: 'failed', error: error.message });
      state.fail(FAILURE_TYPES.stepFailed, `step ${step.id}: ${error.message}`);
    }
    state.update(index, { input: resolved });

    const outcome: StepOutcome = await state
      .runStep(step.id, () =>
        // The public step function; the spec was validated, so the input is the model's.
        runServiceJob(step.model, resolved as ModelInputs[ModelId], {
          key: stepKeyOf(spec.name, step.id),
          label: step.id,
          pacing: { ...input.defaultPacing, ...step.pacing },
          maxResubmits: step.retry?.maxResubmits ?? 0,
          budgetRemaining: () => state.budgetRemaining(),
          // Unset ones take the job's defaults.
          submitTimeoutSeconds: input.submitTimeoutSeconds,
          ambiguousDeadlineHours: input.ambiguousDeadlineHours,
          submitAs,
          ...prepareAfter(input, index, submitAs, state.budgetRemaining() !== undefined),
          observe: state.observeJob(index, release),
          wakeBackoff: state.wakeBackoff(step.id),
        }),
      )
      .catch((error: unknown) => ({ status: 'error', error }) as const);
    if (outcome.status === 'completed') {
      state.update(index, { status: 'completed', finishedAt: Date.now() });
      const copied = new Promise<void>((start) => held.push(start))
        .then(() => archiveOutputs(spec, index, outcome.result))
        .then((copies) => state.update(index, copies));
      archives.set(step.id, copied);
      continue;
    }
    if (outcome.status === 'error') {
      await closing();
      endAfterStepError(state, index, step.id, outcome.error);
    }
    state.update(index, { status: outcome.status, finishedAt: Date.now() });
    await endIfCancelled(index, step.id);
    await closing();
    // The step's job was cancelled at the service by someone else: the chain cannot go on.
    state.fail(
      FAILURE_TYPES.stepCancelled,
      `pipeline ${spec.name}: step ${step.id} was cancelled outside the pipeline (${outcome.status}); no later step was started`,
    );
  }
  await closing();
  return state.complete();
}

/**
 * The steps after step `index` that the bridge may submit as soon as the job before each completes
 * (src/routing/prepared.ts): each reads only the step before it and literals, and nothing in between
 * needs the workflow. Only with local-activity submits (the service honours Idempotency-Key, and the
 * key is the one this workflow sends) and no budget (a budget's quote comes before a submit; one set
 * later still stops the pipeline, and the job the bridge submitted is cancelled and refunded).
 */
function prepareAfter(
  input: PipelineWorkflowInput,
  index: number,
  submitAs: SubmitAs | undefined,
  budgeted: boolean,
): { prepareNext?: PreparedChain } {
  const { spec } = input;
  if (submitAs !== 'local-activity' || budgeted) return {};
  const steps: PreparedStep[] = [];
  for (let next = index + 1; next < spec.steps.length; next += 1) {
    const step = spec.steps[next]!;
    const before = spec.steps[next - 1]!.id;
    let onlyBefore = true;
    forEachReference(step.input, ({ $from }) => (onlyBefore &&= $from === before));
    if (!onlyBefore || input.resume?.steps[step.id]) break;
    const key = idempotencyKeyFor(stepKeyOf(spec.name, step.id), workflowInfo().firstExecutionRunId, 1);
    steps.push({ model: step.model, input: step.input, idempotencyKey: key });
  }
  if (steps.length === 0) return {};
  return { prepareNext: { steps, ...(input.uriRules ? { uriRules: input.uriRules } : {}) } };
}

/** Ends the pipeline after step `stepId` threw `error`: BudgetExceeded, StepFailed naming the cause, or cancelled. */
function endAfterStepError(state: PipelineState, index: number, stepId: string, error: unknown): never {
  const failure = firstApplicationFailure(error);
  const name = state.summary().name;
  if (!failure && isCancellation(error)) {
    state.update(index, { status: 'cancelled', finishedAt: Date.now() });
    state.stop('cancelled', new CancelledFailure('pipeline cancelled'));
  }
  const message = failure?.message ?? (error instanceof Error ? error.message : String(error));
  const budget = failure?.type === FAILURE_TYPES.budgetExceeded;
  state.update(index, { status: budget ? 'budget-exceeded' : 'failed', error: message, finishedAt: Date.now() });
  if (budget) state.fail(FAILURE_TYPES.budgetExceeded, `pipeline ${name} stopped before step ${stepId}: ${message}`);
  state.fail(
    FAILURE_TYPES.stepFailed,
    `pipeline ${name} failed at step ${stepId}${failure ? ` [${failure.type ?? 'Error'}]` : ''}: ${message}`,
  );
}
