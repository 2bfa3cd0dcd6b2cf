import { randomUUID } from 'node:crypto';
import { EVENT_TYPES, LIMITS } from '../../contract';
import { signedHeaders } from '../../contract/signature';
import { headerValue, pinnedRequest, REDIRECT_STATUSES } from '../../net/pinned-request';
import { validateUrl, type AddressRuleOptions } from '../../net/url-rules';
import { chance, journalFault, type FaultConfig } from '../faults';
import type { DeliveryRecord, JobRecord } from '../store/records';
import type { EventBodyStore } from '../store/side-files';
import type { Store } from '../store/store';
import { buildEvent, endpointEvents, eventTypeOf } from './events';

export interface DispatcherOptions {
  store: Store;
  bodies: EventBodyStore;
  faults: () => FaultConfig;
  log: { info: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void };
  /** Per-attempt budget, redirects included (the spec's 10 s handler budget). */
  attemptTimeoutMs?: number;
  /** Address rules applied to the endpoint and to every redirect hop before each attempt. */
  rules: AddressRuleOptions;
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
 * 1, 2, 4, 8, 16 s, a 10 s budget each. Each attempt validates the endpoint's address again and
 * connects to the very address it validated (pinned: no DNS rebinding), follows up to
 * LIMITS.webhookMaxRedirects (3) redirects validating each hop (the spec's endpoint rule, the same as
 * registration's), and treats a name that does not resolve like any network error (retried).
 * Every delivery and every attempt's outcome is journalled with the time of the next attempt, so
 * a restart resumes the schedule where it stopped.
 */
export class WebhookDispatcher {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inFlight = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private closed = false;

  constructor(private readonly options: DispatcherOptions) {}

  private get state() {
    return this.options.store.state;
  }

  /** Schedules every delivery still pending on disk (after a restart). */
  recover(): void {
    for (const delivery of this.state.deliveries.values()) if (delivery.state === 'pending') this.schedule(delivery);
  }

  /**
   * The deliveries of a job's terminal event, one per registered endpoint, with the event body
   * written durably first. The caller journals them in the job's terminal record, so the outcome
   * and its webhooks are one write; then calls `start`.
   */
  prepare(job: JobRecord): DeliveryRecord[] {
    const faults = this.options.faults();
    const eventType = eventTypeOf(job);
    // Failure and cancel events go to the endpoints that asked for them, or to all with the service-wide switch.
    const endpoints = [...this.state.endpoints.values()].filter(
      (e) => endpointEvents(e).includes(eventType) || (eventType !== EVENT_TYPES.completed && faults.failEventsEnabled),
    );
    if (endpoints.length === 0) return [];
    const event = buildEvent(job);
    this.options.bodies.write(event.eventId, event.body);
    const now = Date.now();
    return endpoints.map((endpoint) => {
      const dropped = chance(faults.dropDeliveryRate);
      // Reordering: a random extra wait lets a later event's delivery overtake this one.
      const reorderDelay = faults.reorderDeliveries
        ? Math.floor(Math.random() * Math.max(faults.deliveryDelayMs, 1000))
        : 0;
      return {
        id: `dlv_${randomUUID()}`,
        eventId: event.eventId,
        eventType: event.eventType,
        requestId: job.id,
        endpointId: endpoint.id,
        state: dropped ? 'dropped' : 'pending',
        attempts: 0,
        nextAttemptAt: dropped ? null : now + faults.deliveryDelayMs + reorderDelay,
        lastStatus: null,
        lastError: dropped ? 'dropped by fault injection' : null,
        createdAt: now,
        duplicate: !dropped && chance(faults.duplicateDeliveryRate),
      };
    });
  }

  /** Starts the schedule of deliveries journalled by the caller. */
  start(deliveries: readonly DeliveryRecord[]): void {
    for (const delivery of deliveries) {
      const stored = this.state.deliveries.get(delivery.id);
      if (stored?.state === 'pending') this.schedule(stored);
    }
    this.forgetBodies(deliveries);
  }

  /** Stops timers and aborts attempts in flight; an aborted attempt is not recorded, so it is made again after a restart. */
  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    const flights = [...this.inFlight.values()];
    for (const flight of flights) flight.abort.abort();
    await Promise.allSettled(flights.map((f) => f.done));
  }

  private schedule(delivery: DeliveryRecord): void {
    if (this.closed || delivery.nextAttemptAt === null) return;
    const wait = Math.max(0, delivery.nextAttemptAt - Date.now());
    const timer = setTimeout(() => {
      this.timers.delete(delivery.id);
      // Node's timers may fire a millisecond before Date.now() reaches the target: never send early.
      if (delivery.nextAttemptAt !== null && Date.now() < delivery.nextAttemptAt) return this.schedule(delivery);
      const abort = new AbortController();
      const done = this.attempt(delivery.id, abort.signal)
        .catch((error: unknown) =>
          this.options.log.warn({ deliveryId: delivery.id, err: error }, 'webhook attempt could not be recorded'),
        )
        .finally(() => this.inFlight.delete(delivery.id));
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

    let body: string;
    try {
      body = await this.options.bodies.read(delivery.eventId);
    } catch (error) {
      body = '';
      this.options.log.warn({ deliveryId: id, err: error }, 'webhook event body is missing');
    }
    const sentAt = Date.now();
    const dueAt = delivery.nextAttemptAt ?? sentAt;
    const outcome: AttemptOutcome = body
      ? await this.send(endpoint.url, delivery, body, secrets, signal)
      : { kind: 'permanent', status: null, error: 'the event body was lost' };
    if (signal.aborted || this.closed) return;

    const attempts = delivery.attempts + 1;
    const endedAt = Date.now();
    let state: DeliveryRecord['state'] = 'pending';
    let nextAttemptAt: number | null = null;
    if (outcome.kind === 'ok') state = 'delivered';
    else if (outcome.kind === 'permanent') state = 'failed';
    else {
      const delay = LIMITS.webhookRetryDelaysSeconds[attempts - 1];
      if (attempts >= LIMITS.webhookMaxAttempts || delay === undefined) state = 'failed';
      else nextAttemptAt = endedAt + delay * 1000;
    }
    const lastStatus = outcome.status;
    const lastError = outcome.kind === 'ok' ? null : (outcome.error ?? `HTTP ${outcome.status}`);
    this.options.store.commit({
      t: 'delivery.attempted',
      id,
      attempts,
      state,
      nextAttemptAt,
      lastStatus,
      lastError,
      dueAt,
      sentAt,
      endedAt,
    });
    this.options.log.info(
      { deliveryId: id, eventId: delivery.eventId, attempt: attempts, status: lastStatus, state },
      'webhook attempt',
    );
    const updated = this.state.deliveries.get(id);
    if (!updated) return;
    if (state === 'pending') this.schedule(updated);
    else if (state === 'delivered' && updated.duplicate) {
      // Duplicate-delivery fault: the same event (same event_id and body) goes out once more.
      await this.send(endpoint.url, updated, body, secrets, signal);
      if (!signal.aborted && !this.closed)
        journalFault(this.options.store, {
          kind: 'delivery_duplicated',
          requestId: updated.requestId,
          idempotencyKey: null,
          eventId: updated.eventId,
        });
    }
    if (state !== 'pending') this.forgetBodies([updated]);
  }

  /** One attempt: validate, connect to the validated address, follow LIMITS.webhookMaxRedirects validated redirects. */
  private async send(
    url: string,
    delivery: DeliveryRecord,
    body: string,
    secrets: string[],
    signal: AbortSignal,
  ): Promise<AttemptOutcome> {
    const headers = {
      'content-type': 'application/json',
      ...signedHeaders({
        id: delivery.eventId,
        timestamp: Math.floor(Date.now() / 1000),
        body,
        secrets,
        eventType: delivery.eventType,
      }),
    };
    const timeoutMs = this.options.attemptTimeoutMs ?? LIMITS.webhookHandlerBudgetSeconds * 1000;
    const budget = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    const timeouts = { connectTimeoutMs: timeoutMs, headersTimeoutMs: timeoutMs, bodyTimeoutMs: timeoutMs };
    let target: string | URL = url;
    try {
      for (let redirects = 0; ; redirects++) {
        const hop = redirects === 0 ? '' : `redirect ${redirects}: `;
        const check = await validateUrl(target, this.options.rules);
        if (!check.ok) {
          if (check.dnsFailure) return { kind: 'retry', status: null, error: `${hop}${check.reason}` };
          return { kind: 'permanent', status: null, error: `${hop}refused: ${check.reason}` };
        }
        const response = await pinnedRequest(check.url, check.address, {
          method: 'POST',
          headers,
          body,
          signal: budget,
          timeouts,
        });
        const status = response.statusCode;
        const location = headerValue(response.headers.location);
        await response.close();
        if (REDIRECT_STATUSES.includes(status) && location !== undefined) {
          if (redirects >= LIMITS.webhookMaxRedirects) {
            return { kind: 'permanent', status, error: `more than ${LIMITS.webhookMaxRedirects} redirects` };
          }
          try {
            target = new URL(location, check.url);
          } catch {
            return { kind: 'permanent', status, error: `redirect ${redirects + 1} has an invalid Location` };
          }
          continue;
        }
        const kind = classifyStatus(status);
        if (kind === 'ok') return { kind, status };
        return { kind, status, error: `${hop}HTTP ${status}` };
      }
    } catch (error) {
      return {
        kind: 'retry',
        status: null,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      };
    }
  }

  /** Deletes the body files of events none of whose deliveries is pending any more. */
  private forgetBodies(deliveries: readonly DeliveryRecord[]): void {
    const events = new Set(deliveries.map((d) => d.eventId));
    for (const other of this.state.deliveries.values()) if (other.state === 'pending') events.delete(other.eventId);
    for (const eventId of events) void this.options.bodies.remove(eventId).catch(() => undefined);
  }
}
