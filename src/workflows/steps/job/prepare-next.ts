import { workflowInfo } from '@temporalio/workflow';
import type { SubmitAs } from '../../../activities';
import type { PreparedChain, PreparedStep } from '../../../contract/prepared-submission';
import { stepKeyOf } from '../../../contract/workflow-names';
import { forEachReference } from '../../../spec/references';
import type { PipelineWorkflowInput } from '../../pipeline-types';
import { idempotencyKeyFor } from './service-job';

/**
 * The steps after step `index` that the bridge may submit as soon as the job before each completes
 * (src/routing/prepared.ts): each reads only the step before it and literals, and nothing in between
 * needs the workflow. Only with local-activity submits (the service honours Idempotency-Key, and the
 * key is the one this workflow sends) and no budget (a budget's quote comes before a submit; one set
 * later still stops the pipeline, and the job the bridge submitted is cancelled and refunded).
 */
export function prepareAfter(
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
