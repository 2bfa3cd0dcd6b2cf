import type { WebhookEvent } from './resources';

/**
 * Where the bridge hands a verified event (src/bridge), implemented by the route store's inbox
 * (src/routing) or a team's own sink: the one interface between the two, so neither imports the other.
 * `deliver` resolves only once the event is durable.
 */
export interface EventSink {
  /**
   * Rejects with EventSinkUnavailableError when the event could not be made durable (the bridge
   * answers 503 with the error's Retry-After). `body` is the verified body as received (the event
   * serialised again when absent).
   */
  deliver(event: WebhookEvent, body?: Buffer): Promise<void>;
  /** True when the backing store answers (readiness). Never throws. */
  ready(): Promise<boolean>;
}
