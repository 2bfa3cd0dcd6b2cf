import { workflowInfo } from '@temporalio/workflow';
import type { ModelId, ModelInputs } from '../../../contract';
import { MODELS } from '../../../contract/model-metadata';
import type { PreparedChain, PreparedStep } from '../../../contract/prepared-submission';
import { stepKeyOf } from '../../../contract/workflow-names';
import type { SubmitAs } from '../../../activities';
import type { JobStep } from '../../../pipeline-spec/spec';
import { forEachReference, referencedStepIds } from '../../../pipeline-spec/references';
import type { PipelineWorkflowInput } from '../../pipeline-types';
import type { StepKind } from '../kind';
import { ACTIVITY_SUMMARIES } from '../../../pipeline-spec/ui-text';
import { waitForBatchResume } from './account-refusal';
import { apiWith } from './proxies';
import { idempotencyKeyFor, runServiceJob, type ServiceJobOptions } from './service-job';
import { chargesSettled, revokePreparedSubmits, workflowJobs } from './workflow-jobs';

/**
 * The paid job as a kind of step (`"model": …`): one job of the service, run by `runServiceJob`
 * (submitted exactly once per attempt, awaited by webhook with polls as the fallback, cancelled for
 * real, resubmitted as its retry policy allows). Its phases are this folder's other modules.
 */
export const jobStep: StepKind<JobStep> = {
  key: 'model',
  open: () => void workflowJobs(),
  dependencies: (step) => referencedStepIds(step.input),
  /** True when the step gives at least one URI input literally (a reference to an earlier output is not checked). */
  preflights(step) {
    const meta = MODELS[step.model];
    return [...meta.uriFields, ...meta.uriListFields].some((field) => {
      const value = step.input[field];
      return typeof value === 'string' || (Array.isArray(value) && value.some((item) => typeof item === 'string'));
    });
  },
  summary: (step) => ({ model: step.model }),
  async quote(step, input) {
    const quote = await apiWith(ACTIVITY_SUMMARIES.quote(step.id, step.model)).quoteJob(step.model, input);
    return quote.credits;
  },
  run(step, run) {
    const { pipeline } = run;
    // The public step function; the spec was validated, so the input is the model's.
    return runServiceJob(step.model, run.input as ModelInputs[ModelId], {
      key: run.stepKey,
      label: run.item ? `${step.id}[${run.item.index}]` : step.id,
      pacing: { ...pipeline.defaultPacing, ...step.pacing },
      maxResubmits: step.retry?.maxResubmits ?? 0,
      ...startDeadlineOf(step.startDeadlineSeconds ?? pipeline.spec.startDeadlineSeconds),
      budgetRemaining: () => run.budgetRemaining(),
      // Unset ones take the job's defaults.
      submitTimeoutSeconds: pipeline.submitTimeoutSeconds,
      ambiguousDeadlineHours: pipeline.ambiguousDeadlineHours,
      submitAs: run.submitAs,
      ...prepareAfter(pipeline, run.index, run.submitAs, run.budgetRemaining() !== undefined),
      observe: (job) => run.observe(job),
      wakeBackoff: () => run.wakeBackoff(),
      ...pauseWith(pipeline),
    });
  },
  resume: (_step, carried) => ({ status: 'completed', carriedFrom: carried.paidInRunId, output: carried.output }),
  revokeAhead: revokePreparedSubmits,
  settled: chargesSettled,
};

/** A batch item waits out an account-level refusal until its batch resumes; a lone pipeline fails with it. */
function pauseWith({ batch, spec }: PipelineWorkflowInput): Pick<ServiceJobOptions, 'whenAccountRefused'> {
  if (!batch) return {};
  return { whenAccountRefused: (refusal) => waitForBatchResume(batch.workflowId, spec.name, refusal) };
}

/** The option when set: a workflow input holds only what is set. */
function startDeadlineOf(seconds: number | undefined): { startDeadlineSeconds?: number } {
  return seconds === undefined ? {} : { startDeadlineSeconds: seconds };
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
  // A graph (version 2) starts steps when their dependencies are done, not the one after a job: never prepared.
  if (submitAs !== 'local-activity' || budgeted || spec.version === 2) return {};
  const steps: PreparedStep[] = [];
  for (let next = index + 1; next < spec.steps.length; next += 1) {
    const step = spec.steps[next]!;
    // Only paid jobs are prepared: nothing after a step of another kind (an approval gate) starts without the workflow.
    if (!('model' in step)) break;
    const before = spec.steps[next - 1]!.id;
    let onlyBefore = true;
    forEachReference(step.input, ({ $from }) => (onlyBefore &&= $from === before));
    // Only a paid job can be prepared: a step of another kind (a local operation) needs the worker.
    if (!('model' in step) || !onlyBefore || input.resume?.steps[step.id]) break;
    const key = idempotencyKeyFor(stepKeyOf(spec.name, step.id), workflowInfo().firstExecutionRunId, 1);
    steps.push({ model: step.model, input: step.input, idempotencyKey: key });
  }
  if (steps.length === 0) return {};
  return { prepareNext: { steps, ...(input.uriRules ? { uriRules: input.uriRules } : {}) } };
}
