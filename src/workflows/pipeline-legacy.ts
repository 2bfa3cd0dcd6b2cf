import {
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  ChildWorkflowFailure,
  executeChild,
  setHandler,
} from '@temporalio/workflow';
import { FAILURE_TYPES } from '../contract/failure-types';
import { ReferenceResolutionError } from '../spec/errors';
import { resolveReferences } from '../spec/references';
import { jobWorkflowId, pipelineProgressQuery } from './definitions';
import { jobWorkflow } from './job';
import type { JobOutcome, JobState } from './job-types';
import { type PipelineSummary, type PipelineWorkflowInput, type StepSummary } from './pipeline-types';
import { endAfterStepError, firstApplicationFailure, finish, publisherFor, sumLedger } from './steps/publish';

/**
 * The pipeline as it ran before the one-workflow change (ONE_WORKFLOW_PATCH): each step a child
 * `jobWorkflow` (`<name>/job/<step>`). Kept only so executions started on the previous code finish
 * on this worker; new executions never come here. Its commands must stay exactly as they were.
 * The spec was validated in the first workflow task of those executions (validation issues no
 * command), so it is not validated again here: that keeps zod out of the workflow bundle.
 */
export async function legacyPipelineWorkflow(input: PipelineWorkflowInput): Promise<PipelineSummary> {
  const spec = input.spec;
  const summary: PipelineSummary = {
    name: spec.name,
    status: 'running',
    currentStep: null,
    budgetCredits: spec.budgetCredits ?? null,
    ledger: { quoted: 0, charged: 0, refunded: 0, net: 0 },
    steps: spec.steps.map((step) => ({
      id: step.id,
      model: step.model,
      status: 'pending',
      jobWorkflowId: jobWorkflowId(spec.name, step.id),
      requestIds: [],
      attempts: 0,
      quoted: 0,
      charged: 0,
      refunded: 0,
      polls: 0,
    })),
    outputs: {},
  };
  setHandler(pipelineProgressQuery, () => summary);
  const publish = publisherFor(input);
  publish(summary);

  for (const [index, step] of spec.steps.entries()) {
    const row = summary.steps[index] as StepSummary;
    // No step starts after a cancel.
    if (CancellationScope.current().consideredCancelled)
      return finish(summary, 'cancelled', publish, new CancelledFailure('pipeline cancelled'));
    summary.currentStep = step.id;
    row.status = 'running';
    let resolved: Record<string, unknown>;
    try {
      resolved = resolveReferences(step.input, summary.outputs);
    } catch (error) {
      if (!(error instanceof ReferenceResolutionError)) throw error;
      row.status = 'failed';
      row.error = error.message;
      return finish(
        summary,
        'failed',
        publish,
        ApplicationFailure.create({
          type: FAILURE_TYPES.stepFailed,
          nonRetryable: true,
          message: `step ${step.id}: ${error.message}`,
        }),
      );
    }
    row.input = resolved;
    publish(summary);

    let result: JobOutcome;
    try {
      result = await executeChild(jobWorkflow, {
        workflowId: row.jobWorkflowId,
        // Even a terminated (not cancelled) pipeline must stop the paid job: the child is asked to cancel.
        parentClosePolicy: 'REQUEST_CANCEL',
        args: [
          {
            pipeline: spec.name,
            step: step.id,
            model: step.model,
            input: resolved,
            maxResubmits: step.retry?.maxResubmits ?? 0,
            ...(spec.budgetCredits !== undefined ? { budgetRemaining: spec.budgetCredits - summary.ledger.net } : {}),
            ...(step.pacing || input.defaultPacing ? { pacing: { ...input.defaultPacing, ...step.pacing } } : {}),
            ...(input.submitTimeoutSeconds !== undefined ? { submitTimeoutSeconds: input.submitTimeoutSeconds } : {}),
          },
        ],
      });
    } catch (error) {
      const failure = error instanceof ChildWorkflowFailure ? firstApplicationFailure(error.cause) : undefined;
      if (failure instanceof ApplicationFailure) {
        const details = failure.details?.[0] as ({ state?: JobState } & Partial<JobState>) | undefined;
        const jobState = details?.state ?? (details?.attempts ? (details as JobState) : undefined);
        if (jobState) record(summary, row, jobState);
      }
      return endAfterStepError(summary, row, failure, error, publish);
    }

    record(summary, row, result);
    if (result.phase === 'completed' && result.result) {
      row.status = 'completed';
      row.output = result.result;
      summary.outputs[step.id] = result.result;
      publish(summary);
      continue;
    }
    row.status = result.phase === 'completed-too-late' ? 'completed-too-late' : 'cancelled';
    if (result.result) row.output = result.result;
    if (CancellationScope.current().consideredCancelled)
      return finish(summary, 'cancelled', publish, new CancelledFailure('pipeline cancelled'));
    // The step's job was cancelled from outside this pipeline (its job workflow, or the request at
    // the service): the chain cannot go on.
    return finish(
      summary,
      'failed',
      publish,
      ApplicationFailure.create({
        type: FAILURE_TYPES.stepCancelled,
        nonRetryable: true,
        message: `pipeline ${spec.name}: step ${step.id} was cancelled outside the pipeline (${row.status}); no later step was started`,
        details: [summary],
      }),
    );
  }
  summary.currentStep = null;
  return finish(summary, 'completed', publish);
}

/** Folds a job's attempts and ledger into its step row and the pipeline ledger. */
function record(summary: PipelineSummary, row: StepSummary, job: JobState): void {
  row.requestIds = job.attempts.flatMap((a) => (a.requestId ? [a.requestId] : []));
  row.attempts = job.attempts.length;
  row.quoted = job.quote ?? 0;
  row.charged = job.attempts.reduce((sum, a) => sum + a.charged, 0);
  row.refunded = job.attempts.reduce((sum, a) => sum + a.refunded, 0);
  row.polls = job.polls;
  summary.ledger = sumLedger(summary.steps);
}
