import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { WebhookEvent } from '../contract';

/**
 * Signals and queries shared by workflows, the bridge and the CLI. Deterministic: imports only
 * `@temporalio/workflow` and the contract.
 */

/** Bridge → rendezvous: a verified webhook event for `request_id`. */
export const webhookEventSignal = defineSignal<[WebhookEvent]>('webhookEvent');

/** Job workflow → rendezvous: "forward events for this request to me". */
export interface Subscription {
  workflowId: string;
}
export const subscribeSignal = defineSignal<[Subscription]>('subscribe');

/** Rendezvous → job workflow (or a test standing in for the bridge): a completion event. */
export const jobEventSignal = defineSignal<[WebhookEvent]>('jobEvent');

/** Rendezvous workflow id for a service request id. One execution per id is Temporal's guarantee. */
export function rendezvousWorkflowId(requestId: string): string {
  return `webhook/${requestId}`;
}

/** Name of the rendezvous workflow type, so the bridge can signal-with-start it by name. */
export const RENDEZVOUS_WORKFLOW_TYPE = 'webhookRendezvousWorkflow';

/** Task queue names, in one place. */
export const TASK_QUEUES = {
  pipelines: 'reelflow-pipelines',
} as const;
