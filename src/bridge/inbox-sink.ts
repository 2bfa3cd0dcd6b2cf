import type { WebhookEvent } from '../contract';
import { InboxFullError } from '../routing/errors';
import type { Inbox } from '../routing/inbox';
import type { RouteStore } from '../routing/store';
import { EventSinkUnavailableError } from './errors';
import type { EventSink } from './event-sink';

/** Retry-After when the inbox is over its bound: long enough for the forwarder to drain a good share. */
export const FULL_RETRY_AFTER_SECONDS = 5;

/**
 * The bridge's sink: a delivery is acknowledged once it is committed to the inbox (the route store);
 * the forwarder signals it to its workflow afterwards (src/routing/forwarder.ts).
 */
export function createInboxSink(inbox: Inbox, store: RouteStore): EventSink {
  return {
    async deliver(event: WebhookEvent, body: Buffer): Promise<void> {
      try {
        await inbox.append({ eventId: event.event_id, requestId: event.request_id, body: body.toString('utf8') });
      } catch (error) {
        const full = error instanceof InboxFullError;
        throw new EventSinkUnavailableError(
          full ? error.message : `the route store did not take the event: ${(error as Error).message}`,
          { cause: error, retryAfterSeconds: full ? FULL_RETRY_AFTER_SECONDS : 1 },
        );
      }
    },
    ready: () => store.ping(),
  };
}
