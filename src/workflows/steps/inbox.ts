import { terminalStateOf, resultFromEvent } from '../../contract/events';
import type { JobResult, JobState, WebhookEvent } from '../../contract';
import type { EventCounts, ServiceError } from '../pipeline-types';

/**
 * Webhook events a pipeline received, by request id. Deduped on `event_id`; the first terminal
 * event of a request wins. Events for a request the pipeline does not know yet are kept: they may
 * belong to a submit still in flight (an event can overtake the submit's answer).
 */
export class Inbox {
  private readonly seen = new Set<string>();
  private readonly terminal = new Map<string, JobState>();
  private readonly results = new Map<string, JobResult>();
  private readonly errors = new Map<string, ServiceError>();
  private received = 0;
  private duplicates = 0;
  /** Distinct events that said nothing new: not terminal, or a second terminal event for a request. */
  private unused = 0;

  /** Takes one delivered event (signal handler, or early events handed over by the submit). */
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
    this.terminal.set(event.request_id, state);
    const carried = resultFromEvent(event);
    if (carried) this.results.set(event.request_id, carried);
    const reason = serviceErrorOf(event.error);
    if (reason) this.errors.set(event.request_id, reason);
  }

  /** The service's reason a failure (or cancel) event gave for `requestId`, if any. */
  errorOf(requestId: string): ServiceError | undefined {
    return this.errors.get(requestId);
  }

  /** The terminal state a webhook reported for `requestId`, if any. */
  terminalOf(requestId: string): JobState | undefined {
    return this.terminal.get(requestId);
  }

  /** The whole result a completed event carried for `requestId`, if any. */
  resultOf(requestId: string): JobResult | undefined {
    return this.results.get(requestId);
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
