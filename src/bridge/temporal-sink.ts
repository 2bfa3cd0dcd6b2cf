import type { Client } from '@temporalio/client';
import type { WebhookEvent } from '../contract';
import { RENDEZVOUS_WORKFLOW_TYPE, webhookEventSignal } from '../workflows/definitions';
import type { RendezvousOptions, webhookRendezvousWorkflow } from '../workflows/webhook-rendezvous';
import { DEFAULT_SIGNAL_TIMEOUT_MS } from './config';
import { EventSinkUnavailableError } from './errors';
import type { EventSink } from './event-sink';
import { rendezvousStartOptions } from './rendezvous-start';

export interface TemporalSinkOptions {
  client: Client;
  taskQueue: string;
  /** Deadline of one signal-with-start, so a slow Temporal becomes a 503 well inside the 10 s budget. */
  signalTimeoutMs?: number;
  readinessTimeoutMs?: number;
  rendezvous?: RendezvousOptions;
}

/** Hands events to the per-request rendezvous workflow by signal-with-start. Keeps no state. */
export function createTemporalSink(options: TemporalSinkOptions): EventSink {
  const { client, taskQueue } = options;
  const signalTimeoutMs = options.signalTimeoutMs ?? DEFAULT_SIGNAL_TIMEOUT_MS;
  const readinessTimeoutMs = options.readinessTimeoutMs ?? 2_000;
  return {
    async deliver(event: WebhookEvent): Promise<void> {
      try {
        await client.connection.withDeadline(Date.now() + signalTimeoutMs, () =>
          client.workflow.signalWithStart<typeof webhookRendezvousWorkflow, [WebhookEvent]>(RENDEZVOUS_WORKFLOW_TYPE, {
            ...rendezvousStartOptions(event.request_id, taskQueue, options.rendezvous),
            signal: webhookEventSignal,
            signalArgs: [event],
          }),
        );
      } catch (error) {
        throw new EventSinkUnavailableError(`Temporal did not accept the event: ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
        });
      }
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
