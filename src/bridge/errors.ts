import { ReelflowError } from '../contract/errors';

/**
 * Typed errors of the webhook bridge, each with a stable `code` that scripts and tests branch on.
 */

/** A configuration value is missing or wrong; `variables` names every offending setting. */
export class BridgeConfigError extends ReelflowError {
  readonly code = 'bridge_config_invalid' as const;
  constructor(
    readonly variables: string[],
    message: string,
  ) {
    super(message);
  }
}

/** Temporal did not accept an event within the per-signal timeout, or refused it. */
export class EventSinkUnavailableError extends ReelflowError {
  readonly code = 'event_sink_unavailable' as const;
}
