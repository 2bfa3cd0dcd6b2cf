/**
 * Typed errors of the webhook bridge, each with a stable `code` that scripts and tests branch on.
 */

/** A configuration value is missing or wrong; `variables` names every offending setting. */
export class BridgeConfigError extends Error {
  readonly code = 'bridge_config_invalid' as const;
  constructor(
    readonly variables: string[],
    message: string,
  ) {
    super(message);
    this.name = 'BridgeConfigError';
  }
}

/** Temporal did not accept an event within the per-signal timeout, or refused it. */
export class EventSinkUnavailableError extends Error {
  readonly code = 'event_sink_unavailable' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EventSinkUnavailableError';
  }
}
