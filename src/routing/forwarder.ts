import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { WebhookEvent } from '../contract';
import type { Inbox } from './inbox';
import { deliverToRouteWorkflow } from './route-workflows';
import type { ClaimedDelivery, RouteStore } from './store';

/** What became of one delivery the forwarder looked at. */
export type ForwardOutcome =
  'signalled' | 'subscriber-closed' | 'route-workflow' | 'parked' | 'unrouted-retry' | 'temporal-retry';

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
   * Signals in flight at once while deliveries keep arriving (one within `busyWindowMs`) and the
   * backlog is under a quarter of the inbox's bound: a burst's acknowledgements keep the CPU first and
   * the forwarder catches up once it is over; past that share it forwards at full `concurrency` (a
   * sustained overload then ends in 503s at the bound, not in a backlog that never drains). Default 1.
   */
  busyConcurrency?: number;
  /** How recent the last delivery must be for the inbox to count as busy. Default 100 ms. */
  busyWindowMs?: number;
  /** Deadline of one signal. Default 5 s. */
  signalTimeoutMs?: number;
  /** A claim's lease: after a crash, another forwarder (or this one, restarted) retries after it. Default 15 s. */
  leaseMs?: number;
  /** How long a delivery with no subscriber is looked at again before it is parked. Default 10 s. */
  parkAfterMs?: number;
  /** Wait before looking at a delivery again when Temporal refused it. Default 1 s. */
  retryMs?: number;
  /** Look for route workflows of pinned older builds when the store has no subscriber. Default true. */
  routeWorkflowFallback?: boolean;
  /** Deliveries and subscriptions older than this are purged (parked ones included). */
  ttlMs: number;
  /** Subscriptions are kept this long (a job may run for hours). Default max(ttlMs, 7 days). */
  subscriptionTtlMs?: number;
  /** How often to purge. Default 60 s. */
  purgeEveryMs?: number;
  /** How often, while idle, to look for due retries. Default 250 ms. */
  idlePollMs?: number;
  now?: () => number;
  /** Told what became of each delivery (metrics, tests). */
  onOutcome?: (outcome: ForwardOutcome, delivery: ClaimedDelivery) => void;
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
  const { store, client } = options;
  const batchSize = options.batchSize ?? 256;
  const concurrency = options.concurrency ?? 32;
  const busyConcurrency = Math.min(options.busyConcurrency ?? 1, concurrency);
  const busyWindowMs = options.busyWindowMs ?? 100;
  const signalTimeoutMs = options.signalTimeoutMs ?? 5_000;
  const leaseMs = options.leaseMs ?? 15_000;
  const parkAfterMs = options.parkAfterMs ?? 10_000;
  const retryMs = options.retryMs ?? 1_000;
  const fallback = options.routeWorkflowFallback ?? true;
  const subscriptionTtlMs = options.subscriptionTtlMs ?? Math.max(options.ttlMs, 7 * DAY_MS);
  const purgeEveryMs = options.purgeEveryMs ?? 60_000;
  const idlePollMs = options.idlePollMs ?? 250;
  const now = options.now ?? Date.now;
  const report = options.onError ?? (() => undefined);

  let running = true;
  let woken = false;
  let wakeUp: (() => void) | null = null;
  let lastPurge = 0;
  let lastCount = 0;

  const signal = async (delivery: ClaimedDelivery): Promise<ForwardOutcome> => {
    const event = JSON.parse(delivery.body) as WebhookEvent;
    const subscription = delivery.subscription;
    try {
      if (subscription) {
        const args: unknown[] = subscription.stepKey !== undefined ? [event, subscription.stepKey] : [event];
        await client.connection.withDeadline(now() + signalTimeoutMs, () =>
          client.workflow.getHandle(subscription.workflowId).signal(subscription.signalName, ...args),
        );
        return 'signalled';
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
      // A subscriber that closed no longer needs its events.
      if (error instanceof WorkflowNotFoundError) return 'subscriber-closed';
      report(error);
      return 'temporal-retry';
    }
  };

  const round = async (): Promise<number> => {
    const claimed = await store.claim(batchSize, now(), leaseMs);
    if (claimed.length === 0) return 0;
    const outcomes = new Array<ForwardOutcome>(claimed.length);
    let next = 0;
    const inbox = options.inbox;
    const busy = () =>
      inbox !== undefined && now() - inbox.lastAppendAt < busyWindowMs && inbox.backlog < inbox.backlogLimit / 4;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, claimed.length) }, async (_, lane) => {
        while (next < claimed.length) {
          // Lanes beyond the busy share wait while deliveries arrive.
          if (lane >= busyConcurrency && busy()) {
            await new Promise((resolve) => setTimeout(resolve, busyWindowMs));
            continue;
          }
          const index = next++;
          outcomes[index] = await signal(claimed[index]!);
        }
      }),
    );
    const seqs = (...wanted: ForwardOutcome[]) =>
      claimed.filter((_, i) => wanted.includes(outcomes[i]!)).map((delivery) => delivery.seq);
    const done = seqs('signalled', 'subscriber-closed', 'route-workflow');
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
    options.inbox?.drained(done.length + parked);
    if (options.onOutcome) claimed.forEach((delivery, i) => options.onOutcome!(outcomes[i]!, delivery));
    return claimed.length;
  };

  const purge = () => {
    const at = now();
    return store.purge(at - options.ttlMs, at - subscriptionTtlMs);
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

  const loop = (async () => {
    while (running) {
      woken = false;
      let claimed = 0;
      try {
        if (now() - lastCount >= 5_000 && options.inbox) {
          lastCount = now();
          options.inbox.setBacklog(await store.pendingCount());
        }
        claimed = await round();
        if (now() - lastPurge >= purgeEveryMs) {
          lastPurge = now();
          await purge();
        }
      } catch (error) {
        report(error);
        if (running) await pause(retryMs);
        continue;
      }
      if (claimed < batchSize && !woken && running) await pause(idlePollMs);
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
