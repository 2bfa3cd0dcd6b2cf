import type { WebhookEvent } from '../contract';

/** Where the bridge hands a verified event. `deliver` resolves only once the event is durable. */
export interface EventSink {
  /** Rejects with EventSinkUnavailableError when the event could not be made durable in time. */
  deliver(event: WebhookEvent): Promise<void>;
  /** True when the backing store answers (readiness). Never throws. */
  ready(): Promise<boolean>;
}
