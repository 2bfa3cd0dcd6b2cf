import type { RouteStore, InboxEntry } from './store';
import { InboxFullError } from './errors';

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
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The bridge's durable inbox: `append` resolves once the delivery is committed to the route store.
 * Group commit: deliveries that arrive while a commit runs wait for the next one, which carries them
 * all in one transaction, so the commit rate, not the delivery rate, is what the disk sees.
 */
export class Inbox {
  private readonly store: RouteStore;
  private readonly maxBatch: number;
  private readonly now: () => number;
  private readonly queue: Waiting[] = [];
  private flushing = false;
  private pending = 0;
  private readonly listeners: (() => void)[] = [];
  /** When the last delivery was appended (ms, this inbox's clock): the forwarder yields while it is recent. */
  lastAppendAt = 0;
  readonly backlogLimit: number;

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
  setBacklog(pending: number): void {
    this.pending = pending;
  }

  /** The forwarder handed `count` deliveries over (or parked them). */
  drained(count: number): void {
    this.pending = Math.max(0, this.pending - count);
  }

  /** Called after each commit that stored something new (the forwarder wakes up). */
  onAppended(listener: () => void): void {
    this.listeners.push(listener);
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
    this.lastAppendAt = this.now();
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ entry, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        // Let the deliveries already read from sockets join this commit.
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, this.maxBatch);
    try {
      const inserted = await this.store.append(
        batch.map((waiting) => waiting.entry),
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
