import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { ReelflowActivities } from '../../activities';

/** Idempotent service calls (quote, poll, fetch, cancel): retried by Temporal with backoff; non-retryable failures stop at once. */
export const api = proxyActivities<ReelflowActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/**
 * The submit-and-subscribe activity. Transport failures before the request reached the service are
 * retried by the client; a retry here mostly covers a worker that died mid-submit, which the
 * Idempotency-Key makes safe. `timeoutSeconds` bounds one attempt (a crashed worker's submit is
 * retried after the heartbeat timeout at the latest).
 */
export function submitActivities(timeoutSeconds = 120): Pick<ReelflowActivities, 'submitAndSubscribe'> {
  return proxyActivities<ReelflowActivities>({
    startToCloseTimeout: `${timeoutSeconds} seconds`,
    heartbeatTimeout: `${Math.min(30, timeoutSeconds)} seconds`,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
  });
}

/** Checks that need zod run as local activities on the worker, outside the workflow sandbox. */
export const checks = proxyLocalActivities<ReelflowActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});
