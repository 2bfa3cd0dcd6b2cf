import { inSpan, recordSpan, tracingOn } from '../tracing';
import type { ClaimedDelivery } from './store';

/**
 * The bridge's spans of one delivery (docs/observability.md, "Tracing"): `reelflow.bridge.receive` (from
 * the inbox taking the verified delivery to its commit: the service's answer waited on it), its child
 * `reelflow.bridge.commit` (the group commit that made it durable), and `reelflow.bridge.signal` (the
 * forwarder's hand-over: the next step's submit when the bridge makes it, then the signal Temporal's
 * client interceptor traces into the workflow). The delivery carries no trace context, so they are made
 * once the forwarder has read the job's trace link, under the span of the submit that started the job:
 * receive and commit with the times this bridge measured (or the store's commit time, for a delivery
 * another bridge took).
 */

/** When this bridge took a delivery and committed it (ms since the epoch). */
export interface CommitTime {
  queuedAt: number;
  commitStartedAt: number;
  committedAt: number;
}

/** Most commit times kept: a forwarder that falls this far behind records the rest with the store's time. */
const MAX_KEPT = 10_000;

/** The commit times of deliveries this bridge took, kept (only while the process traces) until forwarded. */
export class CommitTimes {
  private readonly times = new Map<string, CommitTime>();

  /** Records a committed batch's times (nothing while tracing is off). */
  record(eventIds: readonly string[], queuedAt: readonly number[], commitStartedAt: number, committedAt: number): void {
    if (!tracingOn()) return;
    for (const [i, eventId] of eventIds.entries()) {
      if (this.times.size >= MAX_KEPT) this.times.delete(this.times.keys().next().value!);
      this.times.set(eventId, { queuedAt: queuedAt[i] ?? commitStartedAt, commitStartedAt, committedAt });
    }
  }

  /** Takes the times of `eventId` (they are not kept after its forward). */
  take(eventId: string): CommitTime | undefined {
    const time = this.times.get(eventId);
    this.times.delete(eventId);
    return time;
  }
}

/**
 * Runs `forward` (the hand-over of `delivery`) in its `reelflow.bridge.signal` span, after recording
 * the delivery's receive and commit spans under `link` (the job's trace; without one, a trace of their
 * own). While tracing is off it runs `forward` alone.
 */
export async function tracedForward<T extends string>(
  delivery: ClaimedDelivery,
  link: string | undefined,
  times: CommitTime | undefined,
  forward: () => Promise<T>,
): Promise<T> {
  if (!tracingOn()) return forward();
  const attributes = {
    'reelflow.request_id': delivery.requestId,
    'reelflow.event_id': delivery.eventId,
    ...(delivery.subscription ? { 'reelflow.workflow_id': delivery.subscription.workflowId } : {}),
  };
  const committedAt = times?.committedAt ?? delivery.receivedAt;
  const receive = recordSpan(
    'reelflow.bridge.receive',
    link,
    { startTime: times?.queuedAt ?? committedAt, endTime: committedAt },
    attributes,
  );
  if (receive)
    recordSpan('reelflow.bridge.commit', receive, {
      startTime: times?.commitStartedAt ?? committedAt,
      endTime: committedAt,
    });
  return inSpan(
    'reelflow.bridge.signal',
    { role: 'client', attributes, ...(receive ? { parent: receive } : {}) },
    async (span) => {
      const outcome = await forward();
      span?.setAttribute('reelflow.forward.outcome', outcome);
      return outcome;
    },
  );
}
