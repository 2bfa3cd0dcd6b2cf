import { condition, defineQuery, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WebhookEvent } from '../../src/contract';
import { jobEventSignal } from '../../src/workflows/definitions';
import { terminalStateOf } from '../../src/contract/events';

/** Workflows for the bridge tests and benchmark: the real route plus a stand-in subscriber. */
export { webhookRouteWorkflow } from '../../src/workflows/webhook-route';

/** The subscribe activity a test worker registers (see testSubscriberActivities in bridge-fixtures). */
export interface TestSubscribeActivities {
  /** The pipeline's way: subscribeToRoute, returning the events that came first. */
  subscribeRoute(requestId: string, subscriberWorkflowId: string): Promise<WebhookEvent[]>;
}

export interface ObservedEvent {
  event_id: string;
  request_id: string;
  event_type: string;
  /** Workflow time of the task that handled the signal: when the workflow observed the event. */
  observedAt: number;
}

export interface SubscriberState {
  /** Every jobEvent signal received, duplicates included: shows what the route forwarded. */
  received: number;
  /** Distinct events (deduped on event_id, as a pipeline does): "reaches the state once". */
  events: ObservedEvent[];
  /** Events that came back from the route subscription (they arrived before it). */
  handedOver?: number;
}

export const stopSignal = defineSignal('stop');
export const subscriberStateQuery = defineQuery<SubscriberState>('subscriberState');

const { subscribeRoute } = proxyActivities<TestSubscribeActivities>({
  startToCloseTimeout: '10 seconds',
});

/**
 * Stands in for the pipeline: subscribes to each request id (`true`: through the route, as pipelines
 * do; `false`: the caller did),
 * records the events it is sent, and ends once every request saw a terminal event (and `stop` came,
 * if `stayOpen`).
 */
export async function testSubscriberWorkflow(
  requestIds: string[],
  options: { subscribe: boolean; stayOpen?: boolean },
): Promise<SubscriberState> {
  const state: SubscriberState = { received: 0, events: [] };
  const done = new Set<string>();
  let stopped = false;
  const take = (event: WebhookEvent) => {
    if (state.events.some((seen) => seen.event_id === event.event_id)) return;
    state.events.push({
      event_id: event.event_id,
      request_id: event.request_id,
      event_type: event.event_type,
      observedAt: Date.now(),
    });
    if (terminalStateOf(event) !== null) done.add(event.request_id);
  };
  setHandler(jobEventSignal, (event: WebhookEvent) => {
    state.received += 1;
    take(event);
  });
  setHandler(stopSignal, () => {
    stopped = true;
  });
  setHandler(subscriberStateQuery, () => state);
  for (const requestId of requestIds) {
    if (options.subscribe) {
      const early = await subscribeRoute(requestId, workflowInfo().workflowId);
      state.handedOver = (state.handedOver ?? 0) + early.length;
      early.forEach(take);
    }
  }
  await condition(() => requestIds.every((id) => done.has(id)) && (!options.stayOpen || stopped));
  return state;
}
