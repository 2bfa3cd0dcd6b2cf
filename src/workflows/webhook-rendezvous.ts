import {
  condition,
  continueAsNew,
  defineQuery,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { WebhookEvent } from '../contract';
import { terminalStateOf } from '../contract/events';
import { jobEventSignal, subscribeSignal, webhookEventSignal } from './definitions';

/**
 * LEGACY (kept registered until no execution started on the previous code is open; new requests
 * use ./webhook-route). Its commands must not change.
 *
 * Per-request rendezvous between the webhook bridge and the job workflow (design: "Routing a webhook to
 * the waiting workflow"). Its id is `webhook/<request_id>`; both sides signal-with-start it, so whichever
 * comes first starts it and Temporal guarantees one running execution per id. It dedupes events on
 * `event_id`, forwards each distinct event once to every subscriber, and always ends by itself.
 */

/** Lifetime knobs, passed as the start argument by whoever starts the rendezvous. */
export interface RendezvousOptions {
  /**
   * Longest life of a rendezvous, counted from its first start (across continue-as-new): a delivery
   * nobody subscribes to, or a subscription no terminal event ever reaches, ends after this. Default 24 h.
   */
  ttlMs?: number;
  /**
   * How long the rendezvous stays open after it forwarded a terminal event, so that the service's
   * retries of the same delivery (1+2+4+8+16 s apart) land in this execution and are deduped here.
   * Default 2 min.
   */
  graceMs?: number;
}

export const RENDEZVOUS_DEFAULTS = { ttlMs: 24 * 60 * 60 * 1000, graceMs: 2 * 60 * 1000 } as const;

/** Why a rendezvous ended. */
export type RendezvousEnd = 'terminal_forwarded' | 'expired_unsubscribed' | 'expired_subscribed' | 'subscribers_gone';

/** State carried across continue-as-new and exposed by the `rendezvousState` query. */
export interface RendezvousState {
  requestId: string;
  firstStartedAt: number;
  /** Distinct events in arrival order. */
  events: WebhookEvent[];
  /** Subscriber workflow id → event ids already forwarded to it. */
  subscribers: Record<string, string[]>;
  /** Subscribers whose signal failed (workflow closed or never existed). */
  goneSubscribers: string[];
  /** Deliveries of an event id already seen, ignored here. */
  duplicatesIgnored: number;
  terminalForwardedAt: number | null;
}

/** Result of a finished rendezvous (also handy in tests and the Temporal UI). */
export interface RendezvousSummary {
  requestId: string;
  endedBecause: RendezvousEnd;
  eventIds: string[];
  forwarded: Record<string, string[]>;
  goneSubscribers: string[];
  duplicatesIgnored: number;
}

export const rendezvousStateQuery = defineQuery<RendezvousState>('rendezvousState');

/** True for an event after which no other event for the same request is expected. */
export function isTerminalEvent(event: WebhookEvent): boolean {
  return terminalStateOf(event) !== null;
}

/** The rendezvous workflow itself; registered under RENDEZVOUS_WORKFLOW_TYPE. */
export async function webhookRendezvousWorkflow(
  requestId: string,
  options: RendezvousOptions = {},
  carried?: RendezvousState,
): Promise<RendezvousSummary> {
  const ttlMs = options.ttlMs ?? RENDEZVOUS_DEFAULTS.ttlMs;
  const graceMs = options.graceMs ?? RENDEZVOUS_DEFAULTS.graceMs;
  const state: RendezvousState = carried ?? {
    requestId,
    firstStartedAt: Date.now(),
    events: [],
    subscribers: {},
    goneSubscribers: [],
    duplicatesIgnored: 0,
    terminalForwardedAt: null,
  };
  const seen = new Set(state.events.map((event) => event.event_id));

  setHandler(webhookEventSignal, (event) => {
    if (seen.has(event.event_id)) {
      state.duplicatesIgnored += 1;
      return;
    }
    seen.add(event.event_id);
    state.events.push(event);
  });
  setHandler(subscribeSignal, ({ workflowId }) => {
    // A repeated subscription (activity retry, job re-subscribing) keeps what was already forwarded.
    if (!state.subscribers[workflowId]) state.subscribers[workflowId] = [];
    state.goneSubscribers = state.goneSubscribers.filter((id) => id !== workflowId);
  });
  setHandler(rendezvousStateQuery, () => state);

  const pendingFor = (subscriber: string): WebhookEvent[] => {
    const done = new Set(state.subscribers[subscriber] ?? []);
    return state.events.filter((event) => !done.has(event.event_id));
  };
  const hasPending = (): boolean => Object.keys(state.subscribers).some((id) => pendingFor(id).length > 0);
  const summary = (endedBecause: RendezvousEnd): RendezvousSummary => ({
    requestId,
    endedBecause,
    eventIds: state.events.map((event) => event.event_id),
    forwarded: state.subscribers,
    goneSubscribers: state.goneSubscribers,
    duplicatesIgnored: state.duplicatesIgnored,
  });

  for (;;) {
    const deadline =
      state.terminalForwardedAt !== null ? state.terminalForwardedAt + graceMs : state.firstStartedAt + ttlMs;
    const remaining = deadline - Date.now();
    const woke = remaining > 0 ? await condition(hasPending, remaining) : hasPending();

    if (!woke) {
      if (state.terminalForwardedAt !== null) return summary('terminal_forwarded');
      if (state.goneSubscribers.length > 0 && Object.keys(state.subscribers).length === 0)
        return summary('subscribers_gone');
      return summary(Object.keys(state.subscribers).length > 0 ? 'expired_subscribed' : 'expired_unsubscribed');
    }

    for (const subscriber of Object.keys(state.subscribers)) {
      for (const event of pendingFor(subscriber)) {
        try {
          await getExternalWorkflowHandle(subscriber).signal(jobEventSignal, event);
        } catch (error) {
          if (isCancellation(error)) throw error;
          // The subscriber is closed or never existed. Retrying cannot help and must not loop: drop it.
          log.warn('rendezvous subscriber gone', { requestId, subscriber, eventId: event.event_id });
          delete state.subscribers[subscriber];
          state.goneSubscribers.push(subscriber);
          break;
        }
        state.subscribers[subscriber]?.push(event.event_id);
        if (isTerminalEvent(event) && state.terminalForwardedAt === null) state.terminalForwardedAt = Date.now();
      }
    }

    // Every subscriber vanished: nothing is waiting for this request any more.
    if (
      Object.keys(state.subscribers).length === 0 &&
      state.goneSubscribers.length > 0 &&
      state.terminalForwardedAt === null
    ) {
      return summary('subscribers_gone');
    }
    if (workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof webhookRendezvousWorkflow>(requestId, options, state);
    }
  }
}
