import type { WebhookEvent } from './resources';

/**
 * The per-request route workflow of builds before the route store (src/workflows/webhook-route.ts),
 * as data: its options and result, which the bridge's fallback and the submit side of those builds
 * (src/routing/route-workflows.ts) read without importing workflow code. Its type name, id and memo
 * key are in ./workflow-names.ts.
 */

/** Lifetime knobs and the subscriber when the submit side starts it. */
export interface RouteOptions {
  /** Workflow id of the receiver, when known at start (the submit activity). */
  subscriber?: string;
  /** Longest wait for a subscriber (a delivery for a job nobody here submitted). Default 24 h. */
  ttlMs?: number;
}

export const ROUTE_DEFAULTS = { ttlMs: 24 * 60 * 60 * 1000 } as const;

/** Result of a route; the submit activity reads `events` from it if its update came too late. */
export interface RouteSummary {
  requestId: string;
  endedBecause: 'handed_over' | 'expired_unsubscribed' | 'subscriber_gone';
  subscriber: string | null;
  /** Every distinct event it received, in arrival order. */
  events: WebhookEvent[];
  duplicatesIgnored: number;
}
