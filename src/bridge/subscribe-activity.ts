import type { Client } from '@temporalio/client';
import { RENDEZVOUS_WORKFLOW_TYPE, subscribeSignal, type Subscription } from '../workflows/definitions';
import type { RendezvousOptions, webhookRendezvousWorkflow } from '../workflows/webhook-rendezvous';
import { rendezvousStartOptions } from './rendezvous-start';

/** The activity a job workflow calls once it knows its request id (workflows cannot signal-with-start). */
export interface SubscribeActivities {
  /**
   * Subscribes `subscriberWorkflowId` to the events of `requestId`: signal-with-start of the rendezvous.
   * Idempotent: retries and repeated calls only re-assert the subscription.
   */
  subscribeToWebhook(requestId: string, subscriberWorkflowId: string): Promise<void>;
}

/**
 * Builds the subscribe activity. Register the returned object with the worker that runs the job workflow;
 * use the same task queue and rendezvous options as the bridge.
 */
export function createSubscribeActivity(
  client: Client,
  taskQueue: string,
  rendezvous: RendezvousOptions = {},
): SubscribeActivities {
  return {
    async subscribeToWebhook(requestId: string, subscriberWorkflowId: string): Promise<void> {
      await client.workflow.signalWithStart<typeof webhookRendezvousWorkflow, [Subscription]>(
        RENDEZVOUS_WORKFLOW_TYPE,
        {
          ...rendezvousStartOptions(requestId, taskQueue, rendezvous),
          signal: subscribeSignal,
          signalArgs: [{ workflowId: subscriberWorkflowId }],
        },
      );
    },
  };
}
