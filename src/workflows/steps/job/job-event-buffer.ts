import type { JobResult, JobState, WebhookEvent } from '../../../contract';
import { resultFromEvent, terminalStateOf } from '../../../contract/events';
import type { EventCounts, ServiceError } from '../../pipeline-types';

/** A request's first terminal event: its state, and the whole result or the reason it carried. */
export interface TerminalEvent {
  state: JobState;
  result?: JobResult;
  error?: ServiceError;
}

/**
 * Webhook events a workflow received, by request id. Deduped on `event_id`; the first terminal event
 * of a request wins. Events for a request not known yet are kept: an event can overtake its submit's answer.
 */
export class JobEventBuffer {
  private readonly seen = new Set<string>();
  private readonly terminal = new Map<string, TerminalEvent>();
  private received = 0;
  private duplicates = 0;
  /** Distinct events that said nothing new: not terminal, or a second terminal event for a request. */
  private unused = 0;

  accept(event: WebhookEvent): void {
    if (this.seen.has(event.event_id)) {
      this.duplicates += 1;
      return;
    }
    this.seen.add(event.event_id);
    this.received += 1;
    const state = terminalStateOf(event);
    if (!state || this.terminal.has(event.request_id)) {
      this.unused += 1;
      return;
    }
    this.terminal.set(event.request_id, { state, result: resultFromEvent(event), error: serviceErrorOf(event.error) });
  }

  /** The terminal event a webhook reported for `requestId`, if any. */
  terminalOf(requestId: string): TerminalEvent | undefined {
    return this.terminal.get(requestId);
  }

  /** Counts; events for requests outside `requestIds` (the pipeline's own) count as ignored. */
  counts(requestIds: readonly string[]): EventCounts {
    const own = new Set(requestIds);
    const strangers = [...this.terminal.keys()].filter((id) => !own.has(id)).length;
    return { received: this.received, duplicates: this.duplicates, ignored: this.unused + strangers };
  }
}

/** `{code, message}` from an event's or a status answer's `error`, when it has that shape. */
export function serviceErrorOf(error: unknown): ServiceError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string') return undefined;
  return { code, message };
}
