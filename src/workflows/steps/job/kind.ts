import { workflowInfo } from '@temporalio/workflow';
import type { ModelId, ModelInputs } from '../../../contract';
import { MODELS } from '../../../contract/model-metadata';
import type { PreparedChain, PreparedStep } from '../../../contract/prepared-submission';
import { stepKeyOf } from '../../../contract/workflow-names';
import type { SubmitAs } from '../../../activities';
import type { JobStep } from '../../../pipeline-spec/spec';
import { forEachReference } from '../../../pipeline-spec/references';
import type { PipelineWorkflowInput } from '../../pipeline-types';
import type { StepKind } from '../kind';
import { idempotencyKeyFor, runServiceJob } from './service-job';
import { chargesSettled, revokePreparedSubmits, workflowJobs } from './workflow-jobs';

/**
 * The paid job as a kind of step (`"model": …`): one job of the service, run by `runServiceJob`
 * (submitted exactly once per attempt, awaited by webhook with polls as the fallback, cancelled for
 * real, resubmitted as its retry policy allows). Its phases are this folder's other modules.
 */
export const jobStep: StepKind<JobStep> = {
  key: 'model',
  open: () => void workflowJobs(),
  dependencies(step) {
    const ids: string[] = [];
    forEachReference(step.input, ({ $from }) => {
      if (!ids.includes($from)) ids.push($from);
    });
    return ids;
  },
  /** True when the step gives at least one URI input literally (a reference to an earlier output is not checked). */
  preflights(step) {
    const meta = MODELS[step.model];
    return [...meta.uriFields, ...meta.uriListFields].some((field) => {
      const value = step.input[field];
      return typeof value === 'string' || (Array.isArray(value) && value.some((item) => typeof item === 'string'));
    });
  },
  summary: (step) => ({ model: step.model }),
  run(step, run) {
    const { pipeline } = run;
    // The public step function; the spec was validated, so the input is the model's.
    return runServiceJob(step.model, run.input as ModelInputs[ModelId], {
      key: run.stepKey,
      label: step.id,
      pacing: { ...pipeline.defaultPacing, ...step.pacing },
      maxResubmits: step.retry?.maxResubmits ?? 0,
      budgetRemaining: () => run.budgetRemaining(),
      // Unset ones take the job's defaults.
      submitTimeoutSeconds: pipeline.submitTimeoutSeconds,
      ambiguousDeadlineHours: pipeline.ambiguousDeadlineHours,
      submitAs: run.submitAs,
      ...prepareAfter(pipeline, run.index, run.submitAs, run.budgetRemaining() !== undefined),
      observe: (job) => run.observe(job),
      wakeBackoff: () => run.wakeBackoff(),
    });
  },
  resume: (_step, carried) => ({ status: 'completed', carriedFrom: carried.paidInRunId, output: carried.output }),
  revokeAhead: revokePreparedSubmits,
  settled: chargesSettled,
};

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
    // Only paid jobs are prepared: nothing after a step of another kind (an approval gate) starts without the workflow.
    if (!('model' in step)) break;
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
