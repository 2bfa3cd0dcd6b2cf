import { condition, defineQuery, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { WebhookEvent } from '../../src/contract';
import { jobEventSignal } from '../../src/workflows/definitions';
import type { SubscribeActivities } from '../../src/bridge/subscribe-activity';
import { isTerminalEvent } from '../../src/workflows/webhook-rendezvous';

/** Workflows for the bridge tests and benchmark: the real rendezvous plus a stand-in job workflow. */
export { webhookRendezvousWorkflow } from '../../src/workflows/webhook-rendezvous';

export interface ObservedEvent {
  event_id: string;
  request_id: string;
  event_type: string;
  /** Workflow time of the task that handled the signal: when the workflow observed the event. */
  observedAt: number;
}

export interface SubscriberState {
  /** Every jobEvent signal received, duplicates included: shows what the rendezvous forwarded. */
  received: number;
  /** Distinct events (deduped on event_id, as a job workflow does): "reaches the state once". */
  events: ObservedEvent[];
}

export const stopSignal = defineSignal('stop');
export const subscriberStateQuery = defineQuery<SubscriberState>('subscriberState');

const { subscribeToWebhook } = proxyActivities<SubscribeActivities>({ startToCloseTimeout: '10 seconds' });

/**
 * Stands in for the job workflow: subscribes to each request id (unless told the caller did), records the
 * events it is sent, and ends once every request saw a terminal event (and `stop` came, if `stayOpen`).
 */
export async function testSubscriberWorkflow(
  requestIds: string[],
  options: { subscribe: boolean; stayOpen?: boolean },
): Promise<SubscriberState> {
  const state: SubscriberState = { received: 0, events: [] };
  const done = new Set<string>();
  let stopped = false;
  setHandler(jobEventSignal, (event: WebhookEvent) => {
    state.received += 1;
    if (state.events.some((seen) => seen.event_id === event.event_id)) return;
    state.events.push({ event_id: event.event_id, request_id: event.request_id, event_type: event.event_type, observedAt: Date.now() });
    if (isTerminalEvent(event)) done.add(event.request_id);
  });
  setHandler(stopSignal, () => {
    stopped = true;
  });
  setHandler(subscriberStateQuery, () => state);
  if (options.subscribe) {
    for (const requestId of requestIds) await subscribeToWebhook(requestId, workflowInfo().workflowId);
  }
  await condition(() => requestIds.every((id) => done.has(id)) && (!options.stayOpen || stopped));
  return state;
}
