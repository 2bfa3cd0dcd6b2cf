import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { WebhookEvent } from '../contract';
import {
  ROUTE_SUBSCRIBER_MEMO,
  ROUTE_WORKFLOW_TYPE,
  routeWorkflowId,
  stepEventSignal,
  subscribeRouteUpdate,
  webhookEventSignal,
} from '../workflows/definitions';
import { ROUTE_DEFAULTS, type RouteOptions, type RouteSummary } from '../workflows/webhook-route';

/**
 * Both halves of routing a webhook event to the pipeline that waits for it (docs/webhook-routing.md):
 * the subscribe half (called by the submit activity once it knows the request id) and the deliver
 * half (called by the bridge with a verified event). Stateless: all state is in Temporal.
 */

export interface RouteSettings {
  client: Client;
  /** Task queue of the route workflow (the pipelines' queue). */
  taskQueue: string;
  /** How long a route started by an early delivery waits for its subscriber. Default 24 h. */
  ttlMs?: number;
}

/** What the bridge did with a delivery (logged and counted). */
export type RouteDelivery = 'direct' | 'parked' | 'subscriber-closed' | 'late';

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
      return await handle.executeUpdate(subscribeRouteUpdate, { args: [{ workflowId: subscriber }] });
    } catch (error) {
      // Closed between the describe and the update: look again.
      if (tries === 2) throw error;
    }
  }
  return [];
}

/** The subscriber a route names in its memo, or null (no route, or one still waiting for its subscriber). */
async function subscriberOf(client: Client, workflowId: string): Promise<string | null> {
  try {
    const description = await client.workflow.getHandle(workflowId).describe();
    const subscriber = description.memo?.[ROUTE_SUBSCRIBER_MEMO];
    return typeof subscriber === 'string' ? subscriber : null;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return null;
    throw error;
  }
}

/** Signals the event to its pipeline; a closed pipeline no longer needs it. */
async function signalSubscriber(client: Client, subscriber: string, event: WebhookEvent): Promise<RouteDelivery> {
  try {
    await client.workflow.getHandle(subscriber).signal(stepEventSignal, event);
    return 'direct';
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 'subscriber-closed';
    throw error;
  }
}

/**
 * Deliver half: hands a verified event to the workflow that waits for it. Resolves only once the
 * event is durable in Temporal (in the pipeline's history, or parked in a route) or provably not
 * needed (its receiver is closed). Common case: one describe and one signal to the pipeline, no
 * other workflow task in between.
 */
export async function deliverToRoute(settings: RouteSettings, event: WebhookEvent): Promise<RouteDelivery> {
  const { client, taskQueue } = settings;
  const ttlMs = settings.ttlMs ?? ROUTE_DEFAULTS.ttlMs;
  const workflowId = routeWorkflowId(event.request_id);
  const subscriber = await subscriberOf(client, workflowId);
  if (subscriber) return signalSubscriber(client, subscriber, event);
  try {
    // No subscriber known: park the event in the route. A closed execution is never replaced
    // (REJECT_DUPLICATE).
    const options: RouteOptions = { ttlMs };
    await client.workflow.signalWithStart(ROUTE_WORKFLOW_TYPE, {
      workflowId,
      taskQueue,
      args: [event.request_id, options],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowExecutionTimeout: executionTimeoutMs(ttlMs),
      signal: webhookEventSignal,
      signalArgs: [event],
    });
    return 'parked';
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  // Closed meanwhile (the subscriber's route closes as soon as it started) or long ago.
  const late = await subscriberOf(client, workflowId);
  return late ? signalSubscriber(client, late, event) : 'late';
}
