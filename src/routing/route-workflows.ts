import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  type WebhookEvent,
  ROUTE_DEFAULTS,
  type RouteOptions,
  type RouteSummary,
  SIGNAL_NAMES,
  UPDATE_NAMES,
  ROUTE_SUBSCRIBER_MEMO,
  ROUTE_WORKFLOW_TYPE,
  routeWorkflowId,
} from '../contract';

/**
 * Routing through route workflows, as builds before the route store did it (docs/webhook-routing.md):
 * kept while pipelines pinned to such a build are open. Their workers subscribe with
 * `subscribeToRoute`; the bridge, finding no row in the route store, delivers through
 * `deliverToRouteWorkflow`.
 */

export interface RouteSettings {
  client: Client;
  /** Task queue of the route workflow (the pipelines' queue). */
  taskQueue: string;
  /** How long a route started by an early delivery waits for its subscriber. Default 24 h. */
  ttlMs?: number;
}

function executionTimeoutMs(ttlMs: number): number {
  // Backstop for "ends by itself": even if no worker ever runs it, the server closes it.
  return ttlMs + 60 * 60 * 1000;
}

/**
 * Subscribe half: names `subscriber` as the receiver of `requestId`'s events and returns the events
 * that arrived before it (usually none). Common case: one start of the route workflow with the
 * subscriber in its memo, which closes by itself at once. Idempotent (activity retries).
 */
export async function subscribeToRoute(
  settings: RouteSettings,
  requestId: string,
  subscriber: string,
): Promise<WebhookEvent[]> {
  const { client, taskQueue } = settings;
  const ttlMs = settings.ttlMs ?? ROUTE_DEFAULTS.ttlMs;
  const workflowId = routeWorkflowId(requestId);
  try {
    const options: RouteOptions = { subscriber, ttlMs };
    await client.workflow.start(ROUTE_WORKFLOW_TYPE, {
      workflowId,
      taskQueue,
      args: [requestId, options],
      memo: { [ROUTE_SUBSCRIBER_MEMO]: subscriber },
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowExecutionTimeout: executionTimeoutMs(ttlMs),
    });
    return [];
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  // A delivery came first (the bridge parked it), or this is a retry of an earlier subscribe.
  const handle = client.workflow.getHandle(workflowId);
  for (let tries = 0; tries < 3; tries += 1) {
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING') {
      // Closed: a route that already handed its events over (to an earlier try of this subscribe,
      // or forwarded them), or one that expired. Its result lists every event it saw.
      if (description.type !== ROUTE_WORKFLOW_TYPE || description.status.name !== 'COMPLETED') return [];
      const summary = (await handle.result()) as RouteSummary;
      return summary.subscriber === subscriber || summary.subscriber === null ? summary.events : [];
    }
    try {
      return await handle.executeUpdate<WebhookEvent[], [{ workflowId: string }]>(UPDATE_NAMES.subscribeRoute, {
        args: [{ workflowId: subscriber }],
      });
    } catch (error) {
      // Closed between the describe and the update: look again.
      if (tries === 2) throw error;
    }
  }
  return [];
}

/** Signals the event to its pipeline; a closed pipeline no longer needs it. */
async function signalSubscriber(
  client: Client,
  subscriber: string,
  event: WebhookEvent,
): Promise<RouteWorkflowDelivery> {
  try {
    await client.workflow.getHandle(subscriber).signal(SIGNAL_NAMES.jobEvent, event);
    return 'direct';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'subscriber-closed';
    throw error;
  }
}

/** What the fallback did with a delivery nobody subscribed to in the route store. */
export type RouteWorkflowDelivery = 'direct' | 'parked' | 'subscriber-closed' | 'none';

/**
 * The fallback for pipelines pinned to a build from before the route store, which subscribed through
 * a route workflow: when `webhook/<request_id>` names a subscriber, signal it; when it is still open
 * waiting for one (an old bridge parked an early event there), add the event to it. Never starts a
 * route workflow: `none` means no route workflow wants the event.
 */
export async function deliverToRouteWorkflow(client: Client, event: WebhookEvent): Promise<RouteWorkflowDelivery> {
  const handle = client.workflow.getHandle(routeWorkflowId(event.request_id));
  let description;
  try {
    description = await handle.describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'none';
    throw error;
  }
  const subscriber = description.memo?.[ROUTE_SUBSCRIBER_MEMO];
  if (typeof subscriber === 'string') return signalSubscriber(client, subscriber, event);
  if (description.status.name !== 'RUNNING') return 'none';
  try {
    await handle.signal(SIGNAL_NAMES.webhookEvent, event);
    return 'parked';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'none';
    throw error;
  }
}
