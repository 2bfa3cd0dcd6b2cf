import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  workflowInfo,
} from '@temporalio/workflow';
import type { SlotAsk } from '../../../activities';
import type { GenerationRequest, WebhookEvent } from '../../../contract';
import { FAILURE_TYPES } from '../../../contract/failure-types';
import { ACTIVITY_SUMMARIES } from '../../../pipeline-spec/ui-text';
import { workflowFailure } from '../../errors';
import type { StepAttempt } from '../../pipeline-types';
import { accountRefusalOf, waitOutRefusal } from './account-refusal';
import { awaitDecision } from './ambiguous';
import { cancelOrAbandon } from './cancel';
import { releasePermit } from './outcome';
import { submitActivities } from './proxies';
import type { JobHandle } from './types';

/**
 * Submits `attempt` and subscribes the workflow to its webhook events, in one activity that is never
 * cancelled half-way: once the POST may have reached the service, the request id must be learned.
 * An ambiguous submit waits for an operator decision (./ambiguous.ts); a 202 that breaks the contract
 * is cancelled or recorded as abandoned before the step fails.
 */
export async function submit(job: JobHandle, attempt: StepAttempt): Promise<void> {
  for (;;) {
    // The submit below runs in a non-cancellable scope; a cancel that came first must stop it here.
    if (CancellationScope.current().consideredCancelled) {
      throw new CancelledFailure('pipeline cancelled before the submit; nothing was sent');
    }
    const ahead = job.jobs.submittedAhead.get(attempt.idempotencyKey);
    if (ahead) {
      // The bridge submitted this attempt with the key prepared for it: the same job a submit would get.
      job.jobs.submittedAhead.delete(attempt.idempotencyKey);
      adopt(job, attempt, ahead.request, ahead.earlyEvents);
      attempt.submittedBy = 'bridge';
      return;
    }
    const activity = submitActivities(
      ACTIVITY_SUMMARIES.submit(job.label, job.model, attempt.idempotencyKey, attempt.attempt),
      job.options.submitTimeoutSeconds,
      job.options.submitAs,
    );
    try {
      const answer = await CancellationScope.nonCancellable(() =>
        activity.submitAndSubscribe({
          model: job.model,
          input: job.input,
          idempotencyKey: attempt.idempotencyKey,
          subscriberWorkflowId: job.workflowId,
          slot: slotAsk(),
          ...(job.options.prepareNext ? { prepareNext: job.options.prepareNext } : {}),
        }),
      );
      if (answer.atCapacity) {
        await awaitSlot(job, attempt);
        continue;
      }
      if (answer.permit) attempt.permit = true;
      adopt(job, attempt, answer.request, answer.earlyEvents);
      if (answer.preparedKey) job.jobs.preparedBehind.set(answer.request.request_id, answer.preparedKey);
      return;
    } catch (error) {
      // An activity's failure carries the ApplicationFailure as its cause; a local activity's may be it.
      const cause = error instanceof ActivityFailure ? error.cause : error;
      if (cause instanceof ApplicationFailure && cause.type === FAILURE_TYPES.submitAnswerInvalid) {
        throw await invalidAnswer(job, attempt, cause);
      }
      const refusal = job.options.whenAccountRefused ? accountRefusalOf(cause) : undefined;
      if (refusal) {
        // A wait that cannot be had (the batch closed) leaves the refusal standing: the job fails with it.
        const waited = await waitOutRefusal(job, attempt, refusal).then(
          () => true,
          (waitError: unknown) => {
            if (isCancellation(waitError)) throw waitError;
            return false;
          },
        );
        if (waited) continue;
        throw error;
      }
      if (!(cause instanceof ApplicationFailure) || cause.type !== FAILURE_TYPES.ambiguousSubmission) throw error;
      const why = `the submit may have created a job but no usable answer came back (${cause.message})`;
      // Adopted: the job is the operator's request id; resubmit: the same key again.
      if ((await awaitDecision(job, attempt, why)) === 'adopted') {
        // The ambiguous submit kept its permit, if it took one: the adopted job gives it back when settled.
        attempt.permit = true;
        return;
      }
    }
  }
}

/** Takes `request` as the attempt's job (its answer, from the submit or the bridge), with the events that overtook it. */
function adopt(job: JobHandle, attempt: StepAttempt, request: GenerationRequest, earlyEvents: WebhookEvent[]): void {
  attempt.requestId = request.request_id;
  attempt.statusUrl = request.status_url;
  attempt.responseUrl = request.response_url;
  attempt.cancelUrl = request.cancel_url;
  // This workflow's key is submitted now: the row that prepared it needs no revoke.
  for (const [requestId, key] of job.jobs.preparedBehind)
    if (key === attempt.idempotencyKey) job.jobs.preparedBehind.delete(requestId);
  for (const event of earlyEvents) job.jobs.events.accept(event);
}

/** The 202 broke the contract: cancel the accepted job by what could be read, or record it; then fail the step. */
async function invalidAnswer(
  job: JobHandle,
  attempt: StepAttempt,
  cause: ApplicationFailure,
): Promise<ApplicationFailure> {
  // What of the accepted job the activity could read (its SubmitAnswerInvalid details, src/activities/errors.ts).
  const details = (cause.details?.[0] ?? {}) as { requestId?: string; cancelUrl?: string };
  if (details.requestId) attempt.requestId = details.requestId;
  if (details.cancelUrl) attempt.cancelUrl = details.cancelUrl;
  const reason = `the service accepted the submit but its answer breaks the contract (${cause.message})`;
  // The submit kept the account's permit, if it took one, for the job it created: settling gives it back.
  attempt.permit = true;
  await job.chargeQuote(attempt).catch(() => undefined);
  await cancelOrAbandon(job, attempt, reason);
  const fate = attempt.abandoned ? 'recorded as abandoned' : `cancelled (${attempt.outcome ?? 'state unknown'})`;
  const error = `${reason}; the job${attempt.requestId ? ` ${attempt.requestId}` : ''} was ${fate}`;
  job.set({ error });
  return workflowFailure(FAILURE_TYPES.submitAnswerInvalid, `step ${job.label}: ${error}`, {
    idempotencyKey: attempt.idempotencyKey,
    step: job.label,
    ...(attempt.requestId ? { requestId: attempt.requestId } : {}),
  });
}

/**
 * This run's place in the queue for the account's slots: its Temporal priority (`priority` in the
 * spec, `--priority`; 1 highest … 5, default 3) and fairness key and weight (`--fairness-key`,
 * `--fairness-weight`); without a key, a batch item's batch (its parent) or a lone pipeline's own id.
 */
function slotAsk(): SlotAsk {
  const { runId, priority, parent, workflowId } = workflowInfo();
  const level = priority?.priorityKey;
  return {
    runId,
    priority: level !== undefined && level >= 1 && level <= 5 ? Math.round(level) : 3,
    fairnessKey: priority?.fairnessKey || parent?.workflowId || workflowId,
    weight: priority?.fairnessWeight && priority.fairnessWeight > 0 ? priority.fairnessWeight : 1,
  };
}

/**
 * No slot was free (REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY): the submission is queued
 * in the route store, and the worker that frees a slot for it signals `slotGranted` with its key. Waits
 * for that signal here (no poll; a cancel reaches the wait and gives back the place or the slot).
 */
async function awaitSlot(job: JobHandle, attempt: StepAttempt): Promise<void> {
  const before = job.view().phase;
  job.set({ phase: 'slot' });
  // Queued or granted, the row is this attempt's until it is released.
  attempt.permit = true;
  try {
    await condition(() => job.jobs.slotGrants.has(attempt.idempotencyKey));
  } catch (error) {
    if (isCancellation(error)) await releasePermit(attempt);
    throw error;
  }
  job.jobs.slotGrants.delete(attempt.idempotencyKey);
  if (before) job.set({ phase: before });
}
