import type { WebhookEvent } from '../contract';
import { InboxFullError } from '../routing/errors';
import { Inbox } from '../routing/inbox';
import { startForwarder, type ForwarderOptions } from '../routing/forwarder';
import { DEFAULT_BACKLOG_LIMIT } from '../config/bridge';
import { DEFAULT_ROUTE_TTL_SECONDS } from '../config/route-store';
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
    async deliver(event: WebhookEvent, body?: Buffer): Promise<void> {
      try {
        await inbox.append({
          eventId: event.event_id,
          requestId: event.request_id,
          body: body ? body.toString('utf8') : JSON.stringify(event),
        });
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

/** Options of `startInboxSink`: the store, the Temporal client, and the forwarder's knobs. */
export interface InboxSinkOptions extends Omit<ForwarderOptions, 'inbox' | 'ttlMs'> {
  /** Pending deliveries beyond which `deliver` rejects (503). Default REELFLOW_BRIDGE_BACKLOG_LIMIT's. */
  backlogLimit?: number;
  /** Retention of delivered and unsubscribed deliveries. Default 24 h. */
  ttlMs?: number;
}

/**
 * The bridge's way of taking events, for a receiver of your own (`createWebhookReceiver` of
 * reelflow/webhooks): an inbox in `store` and its forwarder signalling the subscribed workflows.
 * `stop()` stops the forwarder (the store stays open: it is the caller's).
 */
export function startInboxSink(options: InboxSinkOptions): { sink: EventSink; stop(): Promise<void> } {
  const { backlogLimit, ttlMs, ...forwarder } = options;
  const inbox = new Inbox({ store: options.store, backlogLimit: backlogLimit ?? DEFAULT_BACKLOG_LIMIT });
  const running = startForwarder({ ...forwarder, inbox, ttlMs: ttlMs ?? DEFAULT_ROUTE_TTL_SECONDS * 1000 });
  return { sink: createInboxSink(inbox, options.store), stop: () => running.stop() };
}
