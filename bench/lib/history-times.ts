import type { Client } from '@temporalio/client';

/** A history event's time in epoch ms (NaN when absent). */
export const eventMs = (time: { seconds?: unknown; nanos?: number | null } | null | undefined): number =>
  time ? Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6) : NaN;

/** A workflow's span from its history: WorkflowExecutionStarted → its last event (the close), ms. */
export async function historySpanMs(client: Client, workflowId: string): Promise<number> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return eventMs(events.at(-1)?.eventTime) - eventMs(events[0]?.eventTime);
}
