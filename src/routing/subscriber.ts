import { type WebhookEvent, type PreparedChain, SIGNAL_NAMES } from '../contract';
import type { RevokedPrepared, RouteStore } from './store';
import { linkActiveTrace } from './trace-links';

/** How a subscriber wants its events: the signal to send and, for workflows that wait on several jobs, a key. */
export interface SubscribeOptions {
  /** Signal name; default the pipeline's `jobEvent`. Its first argument is the event. */
  signalName?: string;
  /** Passed as the signal's second argument when set. */
  stepKey?: string;
  /** The steps the bridge may submit once this request completes (./prepared.ts), written with the subscription. */
  prepared?: PreparedChain;
}

/** The worker's half of routing: what the submit activity calls once it knows the request id. */
export interface RouteSubscriber {
  /**
   * Names `workflowId` as the receiver of `requestId`'s webhook events and returns those that came
   * before it (usually none), oldest first. Idempotent: an activity retry gets the same events again.
   */
  subscribe(requestId: string, workflowId: string, options?: SubscribeOptions): Promise<WebhookEvent[]>;
  /** Revokes the submit prepared behind `requestId` (the pipeline starts no later step); null when there was none. */
  revokePrepared(requestId: string): Promise<RevokedPrepared | null>;
}

/**
 * The subscribe half over the route store: one row per request, written in the same statement that
 * takes the deliveries parked before it. No Temporal call and no workflow (docs/webhook-routing.md).
 */
export function createRouteSubscriber(store: RouteStore, options: { now?: () => number } = {}): RouteSubscriber {
  const now = options.now ?? Date.now;
  return {
    async subscribe(requestId, workflowId, subscribeOptions = {}) {
      // Before the subscription: a delivery the bridge forwards once it exists finds the link.
      await linkActiveTrace(store, requestId, now());
      const bodies = await store.subscribe(
        {
          requestId,
          workflowId,
          signalName: subscribeOptions.signalName ?? SIGNAL_NAMES.jobEvent,
          ...(subscribeOptions.stepKey !== undefined ? { stepKey: subscribeOptions.stepKey } : {}),
        },
        now(),
        subscribeOptions.prepared ? JSON.stringify(subscribeOptions.prepared) : undefined,
      );
      // The bridge stored these bodies after verifying and validating them.
      return bodies.map((body) => JSON.parse(body) as WebhookEvent);
    },
    revokePrepared: (requestId) => store.revokePrepared(requestId),
  };
}
