import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  type WebhookEvent,
  EventSinkUnavailableError,
  type EventSink,
  resultFromEvent,
  terminalStateOf,
} from '../contract';
import { InboxFullError } from './errors';
import { CROWDED_COMMIT, laneWaitMs, RATE_WINDOW_MS } from './forward-pace';
import { PREPARED_SIGNAL_NAME, type PreparedSubmission, type PreparedSubmitter } from './prepared';
import { deliverToRouteWorkflow } from './route-workflows';
import { warmSignalPath } from './warm-up';
import type { ClaimedDelivery, InboxEntry, RouteStore } from './store';
import { CommitTimes, tracedForward } from './forward-spans';
import { tracingOn } from '../tracing';

/**
 * The bridge's half of routing: its durable inbox (deliveries in, acknowledged once committed) and
 * the forwarder that signals them on to the workflows their subscriptions name (deliveries out).
 */

/** Retry-After when the inbox is over its bound: long enough for the forwarder to drain a good share. */
export const FULL_RETRY_AFTER_SECONDS = 5;

/** Options of the bridge's inbox. */
export interface InboxOptions {
  store: RouteStore;
  /** Pending deliveries beyond which `append` refuses (the bridge answers 503 with Retry-After). */
  backlogLimit: number;
  /** Most deliveries one commit carries. Default 1,000. */
  maxBatch?: number;
  now?: () => number;
}

interface Waiting {
  entry: InboxEntry;
  /** When the inbox took it (ms), kept only while the process traces. */
  queuedAt?: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The bridge's durable inbox, and its event sink: `deliver` (and `append`) resolves once the delivery
 * is committed to the route store. Group commit: deliveries that arrive while a commit runs wait for
 * the next one, which carries them all in one transaction, so the commit rate, not the delivery rate,
 * is what the disk sees.
 */
export class Inbox implements EventSink {
  private readonly store: RouteStore;
  private readonly maxBatch: number;
  private readonly now: () => number;
  private readonly queue: Waiting[] = [];
  private flushing = false;
  private pending = 0;
  private readonly listeners: (() => void)[] = [];
  /** Deliveries appended in the current and the previous 100 ms slot (the recent rate). */
  private slot = 0;
  private inSlot = 0;
  private inPreviousSlot = 0;
  /** Until when the inbox counts as crowded: RATE_WINDOW_MS past its last commit of CROWDED_COMMIT or more. */
  private crowdedUntil = 0;
  readonly backlogLimit: number;
  private oldestPendingAt: number | null = null;
  /** When this bridge took and committed each delivery, for its spans (kept only while the process traces). */
  readonly commitTimes = new CommitTimes();

  constructor(options: InboxOptions) {
    this.store = options.store;
    this.backlogLimit = options.backlogLimit;
    this.maxBatch = options.maxBatch ?? 1_000;
    this.now = options.now ?? Date.now;
  }

  /** Undelivered events as far as this process knows (its appends, less what its forwarder handed over). */
  get backlog(): number {
    return this.pending + this.queue.length;
  }

  /** Sets the backlog from the store's own count (the forwarder does, now and then: other bridges share it). */
  setBacklog(pending: number, oldestPendingAt: number | null = null): void {
    this.pending = pending;
    this.oldestPendingAt = pending > 0 ? oldestPendingAt : null;
  }

  /**
   * Seconds the oldest undelivered event has waited, as of the store's last count (0 when none waits):
   * the figure that grows while Temporal does not take signals and the bridge keeps acknowledging.
   */
  oldestPendingAgeSeconds(): number {
    return this.oldestPendingAt === null ? 0 : Math.max(0, (this.now() - this.oldestPendingAt) / 1000);
  }

  /** The forwarder handed `count` deliveries over (or parked them). */
  drained(count: number): void {
    this.pending = Math.max(0, this.pending - count);
  }

  /**
   * Deliveries a second over the last 100 ms (the current slot and the part of the previous one still
   * inside that window): the forwarder yields the CPU while it is high. Reading the two slots whole
   * halved the rate at the start of each slot, so a steady 300/s read as 150–300 and the forwarder
   * flapped in and out of yielding in the middle of a burst.
   */
  recentRate(): number {
    this.roll();
    const intoSlot = (this.now() % RATE_WINDOW_MS) / RATE_WINDOW_MS;
    return Math.round(((this.inPreviousSlot * (1 - intoSlot) + this.inSlot) * 1000) / RATE_WINDOW_MS);
  }

  /** Whether a commit of the last RATE_WINDOW_MS carried CROWDED_COMMIT deliveries or more: senders at work together. */
  crowded(): boolean {
    return this.now() < this.crowdedUntil;
  }

  private roll(): void {
    const slot = Math.floor(this.now() / RATE_WINDOW_MS);
    if (slot === this.slot) return;
    this.inPreviousSlot = slot === this.slot + 1 ? this.inSlot : 0;
    this.inSlot = 0;
    this.slot = slot;
  }

  private count(): void {
    this.roll();
    this.inSlot += 1;
  }

  /** Called after each commit that stored something new (the forwarder wakes up). */
  onAppended(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * The bridge's sink: appends the verified event (its body as received) and resolves once it is
   * durable. A full inbox or a store failure becomes EventSinkUnavailableError, which the bridge
   * answers with 503 and its Retry-After.
   */
  async deliver(event: WebhookEvent, body?: Buffer): Promise<void> {
    try {
      await this.append({
        eventId: event.event_id,
        requestId: event.request_id,
        body: body ? body.toString('utf8') : JSON.stringify(event),
      });
    } catch (error) {
      const full = error instanceof InboxFullError;
      throw new EventSinkUnavailableError(
        full ? error.message : `the route store did not take the event: ${(error as Error).message}`,
        { cause: error, retryAfterSeconds: full ? FULL_RETRY_AFTER_SECONDS : 1 },
      );
    }
  }

  /** True when the route store answers (the bridge's readiness). */
  ready(): Promise<boolean> {
    return this.store.ping();
  }

  /**
   * Resolves once `entry` is durable (or was already stored: a redelivery). Rejects with InboxFullError
   * past the backlog bound, or RouteStoreUnavailableError when the store did not commit.
   */
  append(entry: InboxEntry): Promise<void> {
    if (this.backlog >= this.backlogLimit)
      return Promise.reject(
        new InboxFullError(`the inbox holds ${this.backlog} undelivered events (limit ${this.backlogLimit})`),
      );
    this.count();
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ entry, resolve, reject, ...(tracingOn() ? { queuedAt: this.now() } : {}) });
      if (!this.flushing) {
        this.flushing = true;
        // Let the deliveries already read from sockets join this commit.
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, this.maxBatch);
    if (batch.length >= CROWDED_COMMIT) this.crowdedUntil = this.now() + RATE_WINDOW_MS;
    const commitStartedAt = this.now();
    try {
      const inserted = await this.store.append(
        batch.map((waiting) => waiting.entry),
        commitStartedAt,
      );
      if (tracingOn())
        this.commitTimes.record(
          batch.map((waiting) => waiting.entry.eventId),
          batch.map((waiting) => waiting.queuedAt ?? commitStartedAt),
          commitStartedAt,
          this.now(),
        );
      this.pending += inserted;
      for (const waiting of batch) waiting.resolve();
      if (inserted > 0) for (const listener of this.listeners) listener();
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
    if (this.queue.length > 0) setImmediate(() => void this.flush());
    else this.flushing = false;
  }
}

/** What became of one delivery the forwarder looked at. */
export type ForwardOutcome =
  | 'signalled'
  | 'signalled-with-next'
  | 'subscriber-closed'
  | 'route-workflow'
  | 'parked'
  | 'unrouted-retry'
  | 'temporal-retry';

/** Options of the forwarder; every duration in milliseconds. */
export interface ForwarderOptions {
  store: RouteStore;
  client: Client;
  /** The inbox of the same bridge: its appends wake the forwarder, and its backlog is kept here. */
  inbox?: Inbox;
  /** Deliveries claimed per round. Default 256. */
  batchSize?: number;
  /** Signals in flight at once (the throttle on Temporal). Default 32. */
  concurrency?: number;
  /**
   * Signals in flight at once while deliveries arrive faster than `quietRate` and the backlog is under
   * a quarter of the inbox's bound: a burst's acknowledgements keep the CPU first and the forwarder
   * catches up once it is over; past that share it forwards at full `concurrency` (a sustained
   * overload then ends in 503s at the bound, not in a backlog that never drains). Default 1.
   */
  busyConcurrency?: number;
  /**
   * While the inbox is busy, even the busy share forwards only deliveries at least this old: a burst
   * shorter than this is acknowledged with the CPU to itself (each signal costs Temporal and the worker
   * CPU on a shared machine), and no delivery waits longer than this for a burst to end. Default 2 s.
   */
  busyHoldMs?: number;
  /** Deliveries a second above which the inbox counts as busy. Default 200. */
  busyRate?: number;
  /**
   * Deliveries a second at or under which the lanes beyond the busy share forward too (and only
   * deliveries at least 100 ms old, so the rate has seen them). A burst's first few hundred
   * milliseconds arrive well under its peak, and read against `busyRate` they sent a lane's worth of
   * pipelines to work beside it. Default `busyRate` / 4.
   */
  quietRate?: number;
  /** Deadline of one signal. Default 5 s. */
  signalTimeoutMs?: number;
  /** A claim's lease: after a crash, another forwarder (or this one, restarted) retries after it. Default 15 s. */
  leaseMs?: number;
  /** How long a delivery with no subscriber is looked at again before it is parked. Default 10 s. */
  parkAfterMs?: number;
  /** Wait before looking at a delivery again when Temporal refused it. Default 1 s. */
  retryMs?: number;
  /**
   * Submits the next step a pipeline prepared behind a completed job before signalling the completion
   * (./prepared.ts); absent (a bridge without the service's key): completions are only forwarded.
   */
  submitter?: PreparedSubmitter;
  /**
   * The account's slots (./account-slots.ts), where this bridge is told the caps: the slot of a job whose
   * terminal event is forwarded is freed and handed on beside the signal, so the next waiting job goes to
   * the service without waiting for this pipeline's workflow task. Absent: the pipeline's settle frees it.
   */
  slots?: { releaseRequest(requestId: string): Promise<void> };
  /**
   * Build the signal path's message codecs and open the Temporal connection when the forwarder starts
   * (./warm-up.ts), not inside the first burst. Default true.
   */
  warmUp?: boolean;
  /** Look for route workflows of pinned older builds when the store has no subscriber. Default true. */
  routeWorkflowFallback?: boolean;
  /** Deliveries and subscriptions older than this are purged (parked ones included). */
  ttlMs: number;
  /** Subscriptions are kept this long (a job may run for hours). Default max(ttlMs, 7 days). */
  subscriptionTtlMs?: number;
  /** How often to purge. Default 60 s. */
  purgeEveryMs?: number;
  /**
   * A store that leaves checkpoints to its caller gets one once a second while deliveries come slower
   * than `quietRate`, and every `checkpointEveryMs` whatever the load (the log stays bounded). Default 10 s.
   */
  checkpointEveryMs?: number;
  /** How often, while idle, to look for due retries. Default 250 ms. */
  idlePollMs?: number;
  now?: () => number;
  /** Told what became of each delivery (metrics, tests). */
  onOutcome?: (outcome: ForwardOutcome, delivery: ClaimedDelivery) => void;
  /** Told when Temporal accepted a delivery's signal (`acceptedAt`, ms since the epoch): the bridge's signal latency. */
  onSignalled?: (delivery: ClaimedDelivery, acceptedAt: number) => void;
  /** Told of store or Temporal failures the loop survives. */
  onError?: (error: unknown) => void;
}

/** A running forwarder. */
export interface Forwarder {
  /** Runs a round now (appends call it through the inbox). */
  wake(): void;
  /** One round, awaited (tests). Resolves with how many deliveries it claimed. */
  round(): Promise<number>;
  /** Purges now (tests); the loop also does every `purgeEveryMs`. */
  purge(): ReturnType<RouteStore['purge']>;
  /** Stops after the round in progress. */
  stop(): Promise<void>;
}

const DAY_MS = 24 * 3600 * 1000;

/**
 * The bridge's forwarder: takes committed deliveries from the route store in batches and signals each
 * to the workflow its subscription names, at most `concurrency` signals at once. A delivery stays
 * pending until Temporal took the signal (or its subscriber is gone), so a bridge killed mid-burst
 * loses nothing: on restart its claims run out and the rounds resume from the store.
 */
export function startForwarder(options: ForwarderOptions): Forwarder {
  const settings = forwarderSettings(options);
  const { store, client, batchSize, now, report } = settings;
  let running = true;
  let woken = false;
  let wakeUp: (() => void) | null = null;
  let lastPurge = 0;
  let lastCheckpoint = 0;
  let lastCount = 0;

  const round = () => forwardRound(settings, () => running);
  const purge = async () => {
    const at = now();
    const purged = await store.purge(at - options.ttlMs, at - settings.subscriptionTtlMs);
    // Trace links live as long as subscriptions; a failed purge of them is tried again next time.
    await store.traceLinks?.purge(at - settings.subscriptionTtlMs).catch(report);
    return purged;
  };

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wakeUp = null;
        resolve();
      }, ms);
      wakeUp = () => {
        clearTimeout(timer);
        wakeUp = null;
        resolve();
      };
    });

  // Before the loop's first round: the codecs are built synchronously here, the connection in the background.
  if (options.warmUp ?? true) void warmSignalPath(client);
  const loop = (async () => {
    while (running) {
      woken = false;
      let claimed = 0;
      try {
        if (now() - lastCount >= 5_000 && options.inbox) {
          lastCount = now();
          options.inbox.setBacklog(await store.pendingCount(), await store.oldestPendingAt());
        }
        claimed = await round();
        if (now() - lastPurge >= settings.purgeEveryMs) {
          lastPurge = now();
          await purge();
        }
        const sinceCheckpoint = now() - lastCheckpoint;
        const quiet = !options.inbox || options.inbox.recentRate() <= settings.quietRate;
        if (
          store.checkpoint &&
          (sinceCheckpoint >= settings.checkpointEveryMs || (quiet && sinceCheckpoint >= 1_000))
        ) {
          lastCheckpoint = now();
          await store.checkpoint();
        }
      } catch (error) {
        report(error);
        if (running) await pause(settings.retryMs);
        continue;
      }
      if (claimed < batchSize && !woken && running) await pause(settings.idlePollMs);
    }
  })();

  const wake = () => {
    woken = true;
    wakeUp?.();
  };
  options.inbox?.onAppended(wake);

  return {
    wake,
    round,
    purge,
    async stop() {
      running = false;
      wakeUp?.();
      await loop;
    },
  };
}

/** The forwarder's options with their defaults. */
function forwarderSettings(options: ForwarderOptions) {
  const concurrency = options.concurrency ?? 32;
  const busyRate = options.busyRate ?? 200;
  const quietRate = Math.min(options.quietRate ?? busyRate / 4, busyRate);
  return {
    options,
    store: options.store,
    client: options.client,
    inbox: options.inbox,
    batchSize: options.batchSize ?? 256,
    concurrency,
    quietRate,
    pace: {
      busyConcurrency: Math.min(options.busyConcurrency ?? 1, concurrency),
      busyRate,
      quietRate,
      busyHoldMs: options.busyHoldMs ?? 2_000,
    },
    signalTimeoutMs: options.signalTimeoutMs ?? 5_000,
    leaseMs: options.leaseMs ?? 15_000,
    parkAfterMs: options.parkAfterMs ?? 10_000,
    retryMs: options.retryMs ?? 1_000,
    fallback: options.routeWorkflowFallback ?? true,
    subscriptionTtlMs: options.subscriptionTtlMs ?? Math.max(options.ttlMs, 7 * DAY_MS),
    purgeEveryMs: options.purgeEveryMs ?? 60_000,
    checkpointEveryMs: options.checkpointEveryMs ?? 10_000,
    idlePollMs: options.idlePollMs ?? 250,
    now: options.now ?? Date.now,
    report: options.onError ?? (() => undefined),
  };
}
type ForwarderSettings = ReturnType<typeof forwarderSettings>;

/**
 * Forwards one delivery (`forwardDelivery`), in the bridge's spans when the process traces: under
 * `link`, the trace of the submit that started the job (./forward-spans.ts).
 */
function signalDelivery(
  settings: ForwarderSettings,
  delivery: ClaimedDelivery,
  link: string | undefined,
): Promise<ForwardOutcome> {
  if (!tracingOn()) return forwardDelivery(settings, delivery);
  const times = settings.inbox?.commitTimes.take(delivery.eventId);
  return tracedForward(delivery, link, times, () => forwardDelivery(settings, delivery));
}

/**
 * Signals one delivery to the workflow its subscription names (with the next step's submit, when the
 * bridge made it), or through the route workflows of older builds; says what became of it.
 */
async function forwardDelivery(settings: ForwarderSettings, delivery: ClaimedDelivery): Promise<ForwardOutcome> {
  const { options, client, now, signalTimeoutMs, fallback, parkAfterMs, report } = settings;
  const event = JSON.parse(delivery.body) as WebhookEvent;
  const subscription = delivery.subscription;
  let next: PreparedSubmission | null = null;
  // Beside the signal, not before it: the pipeline hears of its job as soon as without slots.
  const freeing =
    options.slots && terminalStateOf(event) ? options.slots.releaseRequest(delivery.requestId).catch(report) : null;
  try {
    if (subscription) {
      const result = options.submitter && subscription.stepKey === undefined ? resultFromEvent(event) : undefined;
      // The next job goes to the service before Temporal hears of this one: the hand-off waits on no workflow task.
      if (result) next = await options.submitter!.submitNext(delivery.requestId, result);
      const [name, args] = next
        ? [PREPARED_SIGNAL_NAME, [event, next]]
        : [subscription.signalName, subscription.stepKey !== undefined ? [event, subscription.stepKey] : [event]];
      await client.connection.withDeadline(now() + signalTimeoutMs, () =>
        client.workflow.getHandle(subscription.workflowId).signal(name, ...args),
      );
      // Temporal accepted it: the end of the bridge's signal latency.
      options.onSignalled?.(delivery, now());
      return next ? 'signalled-with-next' : 'signalled';
    }
    if (fallback) {
      const how = await client.connection.withDeadline(now() + signalTimeoutMs, () =>
        deliverToRouteWorkflow(client, event),
      );
      if (how === 'subscriber-closed') return how;
      if (how !== 'none') return 'route-workflow';
    }
    return now() - delivery.receivedAt >= parkAfterMs ? 'parked' : 'unrouted-retry';
  } catch (error) {
    // A subscriber that closed no longer needs its events, nor a job submitted for it (terminated: no revoke ran).
    if (error instanceof WorkflowNotFoundError) {
      if (next) await options.submitter!.cancel(next).catch(report);
      return 'subscriber-closed';
    }
    report(error);
    return 'temporal-retry';
  } finally {
    await freeing;
  }
}

/**
 * One round: claims a batch of due deliveries, signals them over `concurrency` lanes (paced while the
 * inbox is busy), then records each outcome in the store. Resolves with how many it claimed.
 */
async function forwardRound(settings: ForwarderSettings, isRunning: () => boolean): Promise<number> {
  const { options, store, inbox, batchSize, concurrency, pace, leaseMs, parkAfterMs, retryMs, now } = settings;
  const claimed = await store.claim(batchSize, now(), leaseMs);
  if (claimed.length === 0) return 0;
  const links = await traceLinksOf(store, claimed);
  const outcomes = new Array<ForwardOutcome>(claimed.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, claimed.length) }, async (_, lane) => {
      // A stop ends the round here: what no lane took stays claimed, and its lease runs out.
      while (isRunning() && next < claimed.length) {
        const wait = inbox
          ? laneWaitMs(pace, {
              lane,
              ageMs: now() - claimed[next]!.receivedAt,
              rate: inbox.recentRate(),
              crowded: inbox.crowded(),
              backlogHigh: inbox.backlog >= inbox.backlogLimit / 4,
            })
          : 0;
        if (wait > 0) {
          await new Promise((resolve) => setTimeout(resolve, wait));
          continue;
        }
        const index = next++;
        const delivery = claimed[index]!;
        outcomes[index] = await signalDelivery(settings, delivery, links.get(delivery.requestId));
      }
    }),
  );
  const seqs = (...wanted: ForwardOutcome[]) =>
    claimed.filter((_, i) => wanted.includes(outcomes[i]!)).map((delivery) => delivery.seq);
  const done = seqs('signalled', 'signalled-with-next', 'subscriber-closed', 'route-workflow');
  await store.markForwarded(done);
  const parked = await store.park(seqs('parked'));
  const at = now();
  // Not parked after all: a subscriber came meanwhile, so the next round signals it.
  await store.retryAt([...seqs('parked')], at);
  for (const [i, delivery] of claimed.entries())
    if (outcomes[i] === 'unrouted-retry')
      // Looked at again sooner while young (a subscribe racing it), less often as it ages.
      await store.retryAt(
        [delivery.seq],
        at + Math.min(Math.max(250, (at - delivery.receivedAt) / 2), parkAfterMs / 2),
      );
  await store.retryAt(seqs('temporal-retry'), at + retryMs);
  inbox?.drained(done.length + parked);
  if (options.onOutcome)
    claimed.forEach((delivery, i) => outcomes[i] !== undefined && options.onOutcome!(outcomes[i], delivery));
  return claimed.length;
}

/** The trace links of a claimed batch's jobs while the process traces (none otherwise, or when they cannot be read). */
async function traceLinksOf(store: RouteStore, claimed: readonly ClaimedDelivery[]): Promise<Map<string, string>> {
  if (!tracingOn() || !store.traceLinks) return new Map();
  return store.traceLinks.find(claimed.map((delivery) => delivery.requestId)).catch(() => new Map<string, string>());
}
