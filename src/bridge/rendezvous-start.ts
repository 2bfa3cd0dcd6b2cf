import type { WorkflowIdReusePolicy } from '@temporalio/client';
import { rendezvousWorkflowId } from '../workflows/definitions';
import { RENDEZVOUS_DEFAULTS, type RendezvousOptions } from '../workflows/webhook-rendezvous';

/** The start half of a signal-with-start of the rendezvous. */
export interface RendezvousStartOptions {
  workflowId: string;
  taskQueue: string;
  args: [string, RendezvousOptions];
  workflowIdReusePolicy: WorkflowIdReusePolicy;
  workflowExecutionTimeout: number;
}

/**
 * Start options shared by both sides of the rendezvous (bridge and subscribe activity), so whichever
 * side starts it, the execution looks the same.
 */
export function rendezvousStartOptions(
  requestId: string,
  taskQueue: string,
  rendezvous: RendezvousOptions = {},
): RendezvousStartOptions {
  const ttlMs = rendezvous.ttlMs ?? RENDEZVOUS_DEFAULTS.ttlMs;
  const graceMs = rendezvous.graceMs ?? RENDEZVOUS_DEFAULTS.graceMs;
  return {
    workflowId: rendezvousWorkflowId(requestId),
    taskQueue,
    args: [requestId, rendezvous],
    // A closed rendezvous may be started again by a late delivery or subscription: subscribers dedupe on
    // event_id, so a second execution forwarding the same event is harmless (docs/webhook-routing.md).
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    // Backstop for "ends by itself": even if no worker ever runs it, the server closes it.
    workflowExecutionTimeout: ttlMs + graceMs + 60 * 60 * 1000,
  };
}
