import { Context } from '@temporalio/activity';
import type { GenerationRequest } from '../contract';

/**
 * When a submit-and-subscribe attempt got the service's answer but could not subscribe (Temporal
 * hiccup), it leaves the answer in its heartbeat details; the next attempt subscribes with it
 * instead of sending the submit again (which, under `REELFLOW_SERVICE_IDEMPOTENCY=unknown`, would
 * make the step ambiguous for nothing).
 */
interface SubmittedRecord {
  submitted: GenerationRequest;
}

/** The request an earlier attempt of this activity already created, if it recorded one. */
export function submittedByEarlierAttempt(): GenerationRequest | undefined {
  try {
    const details = Context.current().info.heartbeatDetails as Partial<SubmittedRecord> | undefined;
    return typeof details?.submitted?.request_id === 'string' ? details.submitted : undefined;
  } catch {
    return undefined;
  }
}

/** Records `request` for the next attempt. */
export function recordSubmitted(request: GenerationRequest): void {
  try {
    Context.current().heartbeat({ submitted: request } satisfies SubmittedRecord);
  } catch {
    // Not inside an activity.
  }
}
