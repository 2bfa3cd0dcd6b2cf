/**
 * The one shape of reelflow's errors (docs/architecture.md, "Errors"): every error class has a
 * stable machine `code` — a string literal (or a closed union of them) that scripts, tests and
 * log queries branch on — and lives in its folder's own `errors.ts`. The class name is the error's
 * `name`, so an error that crosses into Temporal unmapped still carries a readable failure type.
 *
 * Errors that activities turn into Temporal `ApplicationFailure`s additionally carry a `type` from
 * the one table of failure types (`./failure-types`), which is what workflows branch on (never
 * `instanceof`, which does not survive the trip through Temporal). Plain class, no imports: safe
 * for any layer.
 */
export abstract class ReelflowError extends Error {
  /** Stable machine code of this error (snake_case); never reworded once published. */
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * An event sink could not make a verified event durable (the route store is down, or the inbox is
 * full): the bridge answers 503. Thrown by the route store's inbox (src/routing), answered by the
 * bridge (src/bridge), so it lives here beside the EventSink interface's other users.
 */
export class EventSinkUnavailableError extends ReelflowError {
  readonly code = 'event_sink_unavailable' as const;
  /** Seconds the sender should wait before it retries (the Retry-After header). */
  readonly retryAfterSeconds: number;

  constructor(message: string, options: { cause?: unknown; retryAfterSeconds?: number } = {}) {
    super(message, options);
    this.retryAfterSeconds = options.retryAfterSeconds ?? 1;
  }
}
