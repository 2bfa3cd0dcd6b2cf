import { proxyReelflowActivities, proxyReelflowLocalActivities } from '../../activity-proxy';
import type { ReelflowActivities, SubmitAs } from '../../../activities';
import { SUBMIT_MAX_ATTEMPTS } from '../../../contract/submit-attempts';

/** Idempotent service calls (quote, poll, fetch, cancel): retried by Temporal with backoff; non-retryable failures stop at once. */
const API_OPTIONS = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const;
export const api = proxyReelflowActivities<ReelflowActivities>(API_OPTIONS);

/** The same calls with a summary the Temporal UI shows on the activity ("poll the status of upscale (…c3f1)"). */
export function apiWith(summary: string): ReelflowActivities {
  return proxyReelflowActivities<ReelflowActivities>({ ...API_OPTIONS, summary });
}

/**
 * The submit-and-subscribe activity (a retry mostly covers a worker that died mid-submit: the key makes
 * it safe); as a local activity, a marker instead of three activity events and a workflow task.
 */
export function submitActivities(
  summary: string,
  timeoutSeconds = 120,
  submitAs: SubmitAs = 'activity',
): Pick<ReelflowActivities, 'submitAndSubscribe'> {
  const options = {
    summary,
    startToCloseTimeout: `${timeoutSeconds} seconds`,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '30 seconds',
      maximumAttempts: SUBMIT_MAX_ATTEMPTS,
    },
  } as const;
  if (submitAs === 'local-activity') return proxyReelflowLocalActivities<ReelflowActivities>(options);
  return proxyReelflowActivities<ReelflowActivities>({
    ...options,
    heartbeatTimeout: `${Math.min(30, timeoutSeconds)} seconds`,
  });
}

/**
 * Giving a slot back (and handing it to the next waiter, signalled from this worker): one route-store
 * transaction and a signal or two, so a local activity (one marker, no task).
 */
export const permitRelease = proxyReelflowLocalActivities<Pick<ReelflowActivities, 'releaseAccountPermit'>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

/** Candidate orphans of an ambiguous submit (the account ledger): a help, so few attempts. */
export const candidates = proxyReelflowActivities<Pick<ReelflowActivities, 'candidateOrphans'>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/** Revoking prepared submits when a pipeline ends early: a store statement (and a cancel) from this worker. */
export const preparedRevoke = proxyReelflowLocalActivities<Pick<ReelflowActivities, 'revokePreparedSubmits'>>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});
