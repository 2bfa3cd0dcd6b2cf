import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { EVENT_TYPES, LIMITS } from '../../contract';
import { signedHeaders } from '../../contract/signature';
import { chance, type FaultConfig } from '../faults';
import type { DeliveryRecord, JobRecord } from '../store/records';
import type { Store } from '../store/store';
import { buildEvent, endpointEvents, eventTypeOf } from './events';

export interface DispatcherOptions {
  store: Store;
  faults: () => FaultConfig;
  log: { info: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void };
  /** Per-attempt timeout (the spec's 10 s handler budget). */
  attemptTimeoutMs?: number;
  /** Address rules applied again before every attempt (DNS may have changed since registration). */
  checkUrl: (url: string) => Promise<{ ok: true } | { ok: false; reason: string }>;
}

/** Outcome of one attempt, as the retry rule sees it. */
type AttemptOutcome =
  | { kind: 'ok'; status: number }
  | { kind: 'permanent'; status: number | null; error?: string }
  | { kind: 'retry'; status: number | null; error: string | null };

/** Classifies a receiver's answer: 2xx delivered; 4xx other than 408/425/429 permanent; the rest retried. */
export function classifyStatus(status: number): AttemptOutcome['kind'] {
  if (status >= 200 && status < 300) return 'ok';
  if (status >= 400 && status < 500 && !LIMITS.webhookRetryableClientStatuses.includes(status)) return 'permanent';
  return 'retry';
}

/**
 * Signed, at-least-once webhook deliveries with the spec's retry rule: 6 attempts, retries after
 * 1, 2, 4, 8, 16 s, a 10 s timeout each. Every delivery and every attempt's outcome is journalled
 * with the time of the next attempt, so a restart resumes the schedule where it stopped.
 */
export class WebhookDispatcher {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private readonly agent: Agent;
  private closed = false;

  constructor(private readonly options: DispatcherOptions) {
    const timeout = options.attemptTimeoutMs ?? LIMITS.webhookHandlerBudgetSeconds * 1000;
    this.agent = new Agent({ headersTimeout: timeout, bodyTimeout: timeout, connectTimeout: timeout });
  }

  private get state() {
    return this.options.store.state;
  }

  /** Schedules every delivery still pending on disk (after a restart). */
  recover(): void {
    for (const delivery of this.state.deliveries.values()) if (delivery.state === 'pending') this.schedule(delivery);
  }

  /** Creates the deliveries of a terminal job's event, one per registered endpoint. */
  onTerminal(job: JobRecord): void {
    const faults = this.options.faults();
    const eventType = eventTypeOf(job);
    // Failure and cancel events go to the endpoints that asked for them, or to all with the service-wide switch.
    const endpoints = [...this.state.endpoints.values()].filter((e) => endpointEvents(e).includes(eventType) || (eventType !== EVENT_TYPES.completed && faults.failEventsEnabled));
    if (endpoints.length === 0) return;
    const event = buildEvent(job);
    const now = Date.now();
    for (const endpoint of endpoints) {
      const dropped = chance(faults.dropDeliveryRate);
      // Reordering: a random extra wait lets a later event's delivery overtake this one.
      const reorderDelay = faults.reorderDeliveries ? Math.floor(Math.random() * Math.max(faults.deliveryDelayMs, 1000)) : 0;
      const delivery: DeliveryRecord = {
        id: `dlv_${randomUUID()}`,
        eventId: event.eventId,
        eventType: event.eventType,
        requestId: job.id,
        endpointId: endpoint.id,
        body: event.body,
        state: dropped ? 'dropped' : 'pending',
        attempts: 0,
        nextAttemptAt: dropped ? null : now + faults.deliveryDelayMs + reorderDelay,
        lastStatus: null,
        lastError: dropped ? 'dropped by fault injection' : null,
        createdAt: now,
        duplicate: !dropped && chance(faults.duplicateDeliveryRate),
      };
      this.options.store.commit({ t: 'delivery.created', delivery });
      if (!dropped) this.schedule(delivery);
    }
  }

  /** Stops timers and aborts attempts in flight; an aborted attempt is not recorded, so it is made again after a restart. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    const flights = [...this.inFlight.values()];
    for (const flight of flights) flight.abort.abort();
    await Promise.allSettled(flights.map((f) => f.done));
    await this.agent.close().catch(() => undefined);
  }

  private schedule(delivery: DeliveryRecord): void {
    if (this.closed || delivery.nextAttemptAt === null) return;
    const wait = Math.max(0, delivery.nextAttemptAt - Date.now());
    const timer = setTimeout(() => {
      this.timers.delete(delivery.id);
      const abort = new AbortController();
      const done = this.attempt(delivery.id, abort.signal).finally(() => this.inFlight.delete(delivery.id));
      this.inFlight.set(delivery.id, { abort, done });
    }, wait);
    this.timers.set(delivery.id, timer);
  }

  private async attempt(id: string, signal: AbortSignal): Promise<void> {
    const delivery = this.state.deliveries.get(id);
    if (!delivery || delivery.state !== 'pending') return;
    const endpoint = this.state.endpoints.get(delivery.endpointId);
    if (!endpoint) return;
    const now = Date.now();
    const secrets = [endpoint.secret];
    if (endpoint.previousSecret && (endpoint.previousSecretExpiresAt ?? 0) > now) secrets.push(endpoint.previousSecret);

    const check = await this.options.checkUrl(endpoint.url).catch((error: unknown) => ({ ok: false as const, reason: String(error) }));
    const outcome: AttemptOutcome = check.ok
      ? await this.send(endpoint.url, delivery, secrets, signal)
      : { kind: 'permanent', status: null, error: `refused: ${check.reason}` };
    if (signal.aborted || this.closed) return;

    const attempts = delivery.attempts + 1;
    let state: DeliveryRecord['state'] = 'pending';
    let nextAttemptAt: number | null = null;
    if (outcome.kind === 'ok') state = 'delivered';
    else if (outcome.kind === 'permanent') state = 'failed';
    else {
      const delay = LIMITS.webhookRetryDelaysSeconds[attempts - 1];
      if (attempts >= LIMITS.webhookMaxAttempts || delay === undefined) state = 'failed';
      else nextAttemptAt = Date.now() + delay * 1000;
    }
    const lastStatus = outcome.status;
    const lastError = outcome.kind === 'ok' ? null : (outcome.error ?? `HTTP ${outcome.status}`);
    this.options.store.commit({ t: 'delivery.attempted', id, attempts, state, nextAttemptAt, lastStatus, lastError });
    this.options.log.info({ deliveryId: id, eventId: delivery.eventId, attempt: attempts, status: lastStatus, state }, 'webhook attempt');
    const updated = this.state.deliveries.get(id);
    if (!updated) return;
    if (state === 'pending') this.schedule(updated);
    if (state === 'delivered' && updated.duplicate) {
      // Duplicate-delivery fault: the same event (same event_id and body) goes out once more.
      void this.send(endpoint.url, updated, secrets, signal);
    }
  }

  private async send(url: string, delivery: DeliveryRecord, secrets: string[], signal: AbortSignal): Promise<AttemptOutcome> {
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'reelflow-local-service',
      ...signedHeaders({ id: delivery.eventId, timestamp: Math.floor(Date.now() / 1000), body: delivery.body, secrets, eventType: delivery.eventType }),
    };
    const timeoutMs = this.options.attemptTimeoutMs ?? LIMITS.webhookHandlerBudgetSeconds * 1000;
    try {
      const response = await request(url, {
        method: 'POST',
        headers,
        body: delivery.body,
        dispatcher: this.agent,
        signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
      });
      await response.body.dump().catch(() => undefined);
      const status = response.statusCode;
      const kind = classifyStatus(status);
      if (kind === 'ok') return { kind, status };
      return { kind, status, error: `HTTP ${status}` };
    } catch (error) {
      return { kind: 'retry', status: null, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
    }
  }
}
