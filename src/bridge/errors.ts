import { ReelflowError } from '../contract/errors';

/**
 * Typed errors of the webhook bridge, each with a stable `code` that scripts and tests branch on.
 */

/** The event could not be made durable (the route store is down, or the inbox is full): answer 503. */
export class EventSinkUnavailableError extends ReelflowError {
  readonly code = 'event_sink_unavailable' as const;
  /** Seconds the sender should wait before it retries (the Retry-After header). */
  readonly retryAfterSeconds: number;

  constructor(message: string, options: { cause?: unknown; retryAfterSeconds?: number } = {}) {
    super(message, options);
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
  }
}
