import {
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  setHandler,
  upsertMemo,
} from '@temporalio/workflow';
import type { WebhookEvent } from '../contract';
import { ROUTE_DEFAULTS, type RouteOptions, type RouteSummary } from '../contract/route-workflow';
import { ROUTE_SUBSCRIBER_MEMO, jobEventSignal, subscribeRouteUpdate, webhookEventSignal } from './definitions';

/**
 * Per-request route between the webhook bridge and the waiting pipeline, id `webhook/<request_id>`,
 * as builds before the route store (src/routing) subscribed: registered while pipelines pinned to
 * such a build are open, since the route workflows their submits start run on the current build.
 */

/** Its options and result are data of the contract (src/routing starts and reads it without workflow code). */
export { ROUTE_DEFAULTS, type RouteOptions, type RouteSummary };

/** The route workflow itself; registered under ROUTE_WORKFLOW_TYPE. */
export async function webhookRouteWorkflow(requestId: string, options: RouteOptions = {}): Promise<RouteSummary> {
  const ttlMs = options.ttlMs ?? ROUTE_DEFAULTS.ttlMs;
  let subscriber: string | null = options.subscriber ?? null;
  const events: WebhookEvent[] = [];
  const seen = new Set<string>();
  const handedOver = new Set<string>();
  let duplicatesIgnored = 0;

  const pending = (): WebhookEvent[] => events.filter((event) => !handedOver.has(event.event_id));

  setHandler(webhookEventSignal, (event) => {
    if (seen.has(event.event_id)) {
      duplicatesIgnored += 1;
      return;
    }
    seen.add(event.event_id);
    events.push(event);
  });
  setHandler(subscribeRouteUpdate, ({ workflowId }) => {
    if (subscriber === null) {
      subscriber = workflowId;
      // Later deliveries then go straight to the subscriber (the bridge reads this memo).
      upsertMemo({ [ROUTE_SUBSCRIBER_MEMO]: workflowId });
    }
    const parked = pending();
    for (const event of parked) handedOver.add(event.event_id);
    return parked;
  });

  const summary = (endedBecause: RouteSummary['endedBecause']): RouteSummary => ({
    requestId,
    endedBecause,
    subscriber,
    events,
    duplicatesIgnored,
  });

  if (!(await condition(() => subscriber !== null, Math.max(0, ttlMs)))) return summary('expired_unsubscribed');
  const receiver = subscriber as unknown as string;
  for (;;) {
    for (const event of pending()) {
      try {
        await getExternalWorkflowHandle(receiver).signal(jobEventSignal, event);
      } catch (error) {
        if (isCancellation(error)) throw error;
        // Closed or never existed: nothing waits for this request any more.
        log.warn('route subscriber gone', { requestId, subscriber: receiver, eventId: event.event_id });
        return summary('subscriber_gone');
      }
      handedOver.add(event.event_id);
    }
    await condition(allHandlersFinished);
    if (pending().length === 0) return summary('handed_over');
  }
}
