import type { Client } from '@temporalio/client';
import type { WebhookEvent } from '../contract';
import { DEFAULT_SIGNAL_TIMEOUT_MS } from '../config/bridge';
import { EventSinkUnavailableError } from './errors';
import type { EventSink } from './event-sink';
import { deliverToRoute, type RouteDelivery } from './route-client';

export interface TemporalSinkOptions {
  client: Client;
  taskQueue: string;
  /** Deadline of one delivery to Temporal, so a slow Temporal becomes a 503 well inside the 10 s budget. */
  signalTimeoutMs?: number;
  readinessTimeoutMs?: number;
  /**
   * `ttlMs`: how long a route started by an early delivery waits for its subscriber
   * (REELFLOW_RENDEZVOUS_TTL_SECONDS). `graceMs` has no effect: routes close as soon as they hold
   * nothing, since later deliveries go straight to the subscriber.
   */
  rendezvous?: { ttlMs?: number; graceMs?: number };
  /** Told how each delivery was routed (metrics, tests). */
  onRouted?: (how: RouteDelivery) => void;
}

/**
 * Hands events to Temporal: straight to the waiting pipeline when its route names it, parked in the
 * per-request route otherwise (src/bridge/route-client.ts). Keeps no state.
 */
export function createTemporalSink(options: TemporalSinkOptions): EventSink {
  const { client, taskQueue } = options;
  const signalTimeoutMs = options.signalTimeoutMs ?? DEFAULT_SIGNAL_TIMEOUT_MS;
  const readinessTimeoutMs = options.readinessTimeoutMs ?? 2_000;
  const settings = {
    client,
    taskQueue,
    ...(options.rendezvous?.ttlMs !== undefined ? { ttlMs: options.rendezvous.ttlMs } : {}),
  };
  return {
    async deliver(event: WebhookEvent): Promise<void> {
      let how: RouteDelivery;
      try {
        how = await client.connection.withDeadline(Date.now() + signalTimeoutMs, () => deliverToRoute(settings, event));
      } catch (error) {
        throw new EventSinkUnavailableError(
          `Temporal did not accept the event: ${error instanceof Error ? error.message : String(error)}`,
          {
            cause: error,
          },
        );
      }
      options.onRouted?.(how);
    },
    async ready(): Promise<boolean> {
      try {
        await client.connection.withDeadline(Date.now() + readinessTimeoutMs, () =>
          client.connection.workflowService.describeNamespace({ namespace: client.options.namespace }),
        );
        return true;
      } catch {
        return false;
      }
    },
  };
}
