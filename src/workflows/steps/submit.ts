import { ActivityFailure, ApplicationFailure, CancellationScope, CancelledFailure } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../../contract/failure-types';
import type { StepAttempt } from '../pipeline-types';
import { ACTIVITY_SUMMARIES } from '../../spec/ui-text';
import { cancelOrAbandon } from './abandon';
import { awaitDecision } from './ambiguous';
import { awaitPermit } from './permit';
import { submitActivities } from './proxies';
import type { StepRun } from './step-run';

/** Details of a SubmitAnswerInvalid activity failure (src/activities/errors.ts). */
interface InvalidAnswerDetails {
  requestId?: string;
  cancelUrl?: string;
  fieldErrors?: { path: string; message: string }[];
}

/**
 * Submits `attempt` with its Idempotency-Key and subscribes the pipeline to the request's webhook
 * events, in one activity. Never abandoned half-way: once the POST may have reached the service,
 * the request id must be learned. Events that overtook the answer come back with it.
 * A pipeline already cancelled never submits. A submit that may have created a job whose id is
 * unknown waits for an operator decision (./ambiguous.ts); a 202 that breaks the contract is
 * cancelled or recorded as abandoned (./abandon.ts) before the step fails.
 */
export async function submit(run: StepRun, attempt: StepAttempt): Promise<void> {
  for (;;) {
    // The submit below runs in a non-cancellable scope; a cancel that came first must stop it here.
    if (CancellationScope.current().consideredCancelled) {
      throw new CancelledFailure('pipeline cancelled before the submit; nothing was sent');
    }
    const activity = submitActivities(
      run.submitTimeoutSeconds,
      ACTIVITY_SUMMARIES.submit(run.stepId, run.model, attempt.idempotencyKey, attempt.attempt),
    );
    try {
      const answer = await CancellationScope.nonCancellable(() =>
        activity.submitAndSubscribe({
          model: run.model,
          input: run.input,
          idempotencyKey: attempt.idempotencyKey,
          subscriberWorkflowId: run.workflowId,
        }),
      );
      if (answer.atCapacity) {
        await awaitPermit(run, attempt);
        continue;
      }
      if (answer.permit) attempt.permit = true;
      attempt.requestId = answer.request.request_id;
      attempt.statusUrl = answer.request.status_url;
      attempt.responseUrl = answer.request.response_url;
      attempt.cancelUrl = answer.request.cancel_url;
      for (const event of answer.earlyEvents) run.inbox.accept(event);
      return;
    } catch (error) {
      const cause = error instanceof ActivityFailure ? error.cause : undefined;
      if (cause instanceof ApplicationFailure && cause.type === FAILURE_TYPES.submitAnswerInvalid) {
        throw await invalidAnswer(run, attempt, cause);
      }
      if (!(cause instanceof ApplicationFailure) || cause.type !== FAILURE_TYPES.ambiguousSubmission) throw error;
      // Adopted: the job is the operator's request id; resubmit: the same key again.
      if (
        (await awaitDecision(
          run,
          attempt,
          `the submit may have created a job but no usable answer came back (${cause.message})`,
        )) === 'adopted'
      ) {
        // The ambiguous submit kept its permit, if it took one: the adopted job gives it back when settled.
        attempt.permit = true;
        return;
      }
    }
  }
}

/** The 202 broke the contract: cancel the accepted job by what could be read, or record it; then fail the step. */
async function invalidAnswer(
  run: StepRun,
  attempt: StepAttempt,
  cause: ApplicationFailure,
): Promise<ApplicationFailure> {
  const details = (cause.details?.[0] ?? {}) as InvalidAnswerDetails;
  if (details.requestId) attempt.requestId = details.requestId;
  if (details.cancelUrl) attempt.cancelUrl = details.cancelUrl;
  const reason = `the service accepted the submit but its answer breaks the contract (${cause.message})`;
  // The submit kept the account's permit, if it took one, for the job it created: settling gives it back.
  attempt.permit = true;
  await run.quote.chargeOf(attempt).catch(() => undefined);
  await cancelOrAbandon(run, attempt, reason);
  const fate = attempt.abandoned ? 'recorded as abandoned' : `cancelled (${attempt.outcome ?? 'state unknown'})`;
  run.row.error = `${reason}; the job${attempt.requestId ? ` ${attempt.requestId}` : ''} was ${fate}`;
  return ApplicationFailure.create({
    type: FAILURE_TYPES.submitAnswerInvalid,
    nonRetryable: true,
    message: `step ${run.stepId}: ${run.row.error}`,
    details: [
      {
        idempotencyKey: attempt.idempotencyKey,
        step: run.stepId,
        ...(attempt.requestId ? { requestId: attempt.requestId } : {}),
      },
    ],
  });
}
