import { ReelflowError } from '../contract/errors';

/**
 * Typed errors of the webhook bridge, each with a stable `code` that scripts and tests branch on.
 */

/** Temporal did not accept an event within the per-signal timeout, or refused it. */
export class EventSinkUnavailableError extends ReelflowError {
  readonly code = 'event_sink_unavailable' as const;
}
