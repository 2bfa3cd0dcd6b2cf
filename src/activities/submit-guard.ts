import { Context } from '@temporalio/activity';
import type { GenerationRequest, ModelId, ModelInputs } from '../contract';
import { AmbiguousSubmissionError, ServiceClientError } from '../client/errors';
import { submitFailureKind } from '../client/service-client';
import type { IdempotencySetting, SubmitFailureKind } from '../client/submit-policy';
import type { ServiceClient } from '../client/types';

/** Heartbeat details a submit attempt leaves for the next attempt of the same activity. */
export interface SubmitAttemptRecord {
  /** The last attempt failed this way and its request provably created no job. */
  lastFailure?: Extract<SubmitFailureKind, 'not-sent' | 'refused'>;
  /** The last attempt's submit was answered (the activity failed later, e.g. subscribing): this job. */
  submitted?: GenerationRequest;
  idempotencyKey?: string;
}

function earlierRecord(): Partial<SubmitAttemptRecord> | undefined {
  try {
    const context = Context.current();
    return context.info.attempt > 1
      ? (context.info.heartbeatDetails as Partial<SubmitAttemptRecord> | undefined)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Margin kept before the attempt's start-to-close deadline, so the attempt stops before Temporal retries it. */
const DEADLINE_MARGIN_MS = 1_000;

/**
 * A signal that fires when the activity is cancelled (cancel, heartbeat timeout, worker shutdown) or
 * just before its own start-to-close deadline, so a submit never keeps retrying behind Temporal's
 * back beside the next attempt. Undefined outside an activity.
 */
export function submitAbortSignal(): AbortSignal | undefined {
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return undefined;
  }
  // The attempt started when its task was handed to this worker, i.e. just now (a task may wait in
  // the queue for long after it was scheduled, e.g. while no worker runs, so scheduled times would lie).
  const { startToCloseTimeoutMs, scheduleToCloseTimeoutMs, scheduledTimestampMs } = context.info;
  let remainingMs = startToCloseTimeoutMs - DEADLINE_MARGIN_MS;
  if (scheduleToCloseTimeoutMs)
    remainingMs = Math.min(
      remainingMs,
      scheduledTimestampMs + scheduleToCloseTimeoutMs - Date.now() - DEADLINE_MARGIN_MS,
    );
  return AbortSignal.any([context.cancellationSignal, AbortSignal.timeout(Math.max(1, remainingMs))]);
}

/**
 * Under `unknown`, a submit attempt after the first (the earlier one timed out, its worker died, or it
 * failed) may follow a request that reached the service, unless the earlier attempt recorded that
 * it provably did not. Returns the reason it is ambiguous, or null when sending is safe.
 */
export function earlierAttemptMayHaveSent(setting: IdempotencySetting): string | null {
  if (setting === 'honoured') return null;
  let context: Context;
  try {
    context = Context.current();
  } catch {
    return null;
  }
  // A local activity keeps no record across attempts, and a worker lost mid-submit runs it again as
  // its first attempt: under `unknown` any run of it may follow a request that reached the service.
  if (context.info.isLocal)
    return 'the submit runs as a local activity, whose runs keep no record of what an earlier one sent';
  if (context.info.attempt <= 1) return null;
  const record = context.info.heartbeatDetails as Partial<SubmitAttemptRecord> | undefined;
  if (record?.lastFailure === 'not-sent' || record?.lastFailure === 'refused') return null;
  return `submit attempt ${context.info.attempt - 1} ended (worker lost, timed out or cancelled) after its request may have reached the service`;
}

/** Records the answered submit, so a retry of the activity (failed after it) adopts it without sending. */
function recordSubmitted(request: GenerationRequest, idempotencyKey: string): void {
  try {
    Context.current().heartbeat({ submitted: request, idempotencyKey } satisfies SubmitAttemptRecord);
  } catch {
    // Not inside an activity.
  }
}

/** Records that this attempt failed before anything could be accepted (read by the next attempt). */
export function recordNotAccepted(kind: SubmitFailureKind): void {
  if (kind !== 'not-sent' && kind !== 'refused') return;
  try {
    Context.current().heartbeat({ lastFailure: kind } satisfies SubmitAttemptRecord);
  } catch {
    // Not inside an activity.
  }
}

/**
 * The submit of an activity under the submit policy (docs/submit-policy.md): refuses to resend after
 * an earlier attempt that may have sent (setting `unknown`), stops on cancellation and just before
 * its deadline, and records a provably-not-accepted failure for the next attempt.
 */
export async function guardedSubmit<M extends ModelId>(
  client: ServiceClient,
  model: M,
  input: ModelInputs[M],
  idempotencyKey: string,
): Promise<GenerationRequest> {
  // The earlier attempt got its answer and failed afterwards (subscribing): that job is this one.
  const record = earlierRecord();
  if (record?.submitted && record.idempotencyKey === idempotencyKey) return record.submitted;
  const earlier = earlierAttemptMayHaveSent(client.idempotency ?? 'unknown');
  if (earlier) {
    throw new AmbiguousSubmissionError(
      `${earlier}; not sent again because the service is not known to honour Idempotency-Key; look the job up by Idempotency-Key ${idempotencyKey}`,
      idempotencyKey,
    );
  }
  const signal = submitAbortSignal();
  try {
    const request = await client.submit(model, input, { idempotencyKey, ...(signal ? { signal } : {}) });
    // Only `unknown` needs the record (a retry with the key returns this job where it is honoured):
    // elsewhere the answered submit costs no heartbeat.
    if (client.idempotency !== 'honoured') recordSubmitted(request, idempotencyKey);
    return request;
  } catch (error) {
    if (error instanceof ServiceClientError) recordNotAccepted(submitFailureKind(error));
    throw error;
  }
}
