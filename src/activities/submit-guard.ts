import { Context } from '@temporalio/activity';
import type { IdempotencySetting, SubmitFailureKind } from '../client/submit-policy';

/** Heartbeat details a submit attempt leaves when it failed before anything could be accepted. */
export interface SubmitAttemptRecord {
  /** The last attempt failed this way and its request provably created no job. */
  lastFailure: Extract<SubmitFailureKind, 'not-sent' | 'refused'>;
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
  const { startToCloseTimeoutMs, currentAttemptScheduledTimestampMs } = context.info;
  // Counted from the attempt's scheduling (before its start), so the deadline is never late.
  const remainingMs = startToCloseTimeoutMs - (Date.now() - currentAttemptScheduledTimestampMs) - DEADLINE_MARGIN_MS;
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
  if (context.info.attempt <= 1) return null;
  const record = context.info.heartbeatDetails as Partial<SubmitAttemptRecord> | undefined;
  if (record?.lastFailure === 'not-sent' || record?.lastFailure === 'refused') return null;
  return `submit attempt ${context.info.attempt - 1} ended (worker lost, timed out or cancelled) after its request may have reached the service`;
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
