import { ActivityFailure, ApplicationFailure, CancellationScope } from '@temporalio/workflow';
import type { StepAttempt } from '../pipeline-types';
import { STEP_FAILURE_TYPES } from '../pipeline-types';
import { ACTIVITY_SUMMARIES } from '../ui-text';
import { submitActivities } from './proxies';
import type { StepRun } from './step-run';

/**
 * Submits `attempt` with its Idempotency-Key and subscribes the pipeline to the request's webhook
 * events, in one activity. Never abandoned half-way: once the POST may have reached the service,
 * the request id must be learned. Events that overtook the answer come back with it.
 */
export async function submit(run: StepRun, attempt: StepAttempt): Promise<void> {
  const activity = submitActivities(run.submitTimeoutSeconds, ACTIVITY_SUMMARIES.submit(run.stepId, run.model, attempt.idempotencyKey, attempt.attempt));
  const answer = await CancellationScope.nonCancellable(() =>
    activity.submitAndSubscribe({ model: run.model, input: run.input, idempotencyKey: attempt.idempotencyKey, subscriberWorkflowId: run.workflowId }),
  ).catch((error: unknown) => {
    throw ambiguityOrSame(error, attempt, run);
  });
  attempt.requestId = answer.request.request_id;
  attempt.statusUrl = answer.request.status_url;
  attempt.responseUrl = answer.request.response_url;
  attempt.cancelUrl = answer.request.cancel_url;
  for (const event of answer.earlyEvents) run.inbox.accept(event);
}

/** A submit that may have created a job surfaces as its own non-retryable type, naming what to check. */
function ambiguityOrSame(error: unknown, attempt: StepAttempt, run: StepRun): unknown {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  if (!(cause instanceof ApplicationFailure) || cause.type !== STEP_FAILURE_TYPES.ambiguousSubmission) return error;
  const message =
    `the submit of step ${run.stepId} may have created a job (no answer came back), so it was not retried; the request id is unknown. ` +
    `Check the service's job list for Idempotency-Key ${attempt.idempotencyKey} (resubmitting with that key returns the original job)`;
  attempt.error = message;
  return ApplicationFailure.create({
    type: STEP_FAILURE_TYPES.ambiguousSubmission,
    nonRetryable: true,
    message,
    details: [{ idempotencyKey: attempt.idempotencyKey, step: run.stepId }],
  });
}
