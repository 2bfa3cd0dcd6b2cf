import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallKind, RateGate } from './types';

/**
 * Who holds a permit: one submission, named by its Idempotency-Key.
 * @deprecated The filesystem permits are retired (caps are the route store's slots); removed in the next minor release.
 */
export interface PermitHolder {
  idempotencyKey: string;
  /** The pipeline that submits it (shown to an operator; the reaper does not trust it). */
  workflowId: string;
}

export interface AccountLimitsOptions {
  /**
   * The store: a directory every worker of the account reaches (the local stack's state directory,
   * or a shared filesystem path when workers run on several machines).
   */
  dir: string;
  /**
   * Filesystem permits for jobs in flight; undefined = none (the back-off is shared either way).
   * @deprecated Caps are the route store's slots (REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY); removed in the next minor release.
   */
  concurrency?: number;
  /**
   * Whether a request's job is terminal at the service (the permits' reaper asks it).
   * @deprecated With `concurrency`; removed in the next minor release.
   */
  isTerminal?: (requestId: string) => Promise<boolean>;
  /**
   * A permit is looked at by the reaper only once it is this old (default 30 s).
   * @deprecated With `concurrency`; removed in the next minor release.
   */
  reapAfterMs?: number;
  /**
   * A permit whose submit never recorded a request id is freed after this long (default 30 min).
   * @deprecated With `concurrency`; removed in the next minor release.
   */
  orphanAfterMs?: number;
  now?: () => number;
}

interface SlotHolder {
  /** sha256 of the Idempotency-Key (file names stay short and safe). */
  h: string;
  w: string;
  at: number;
}

const SLOTS = 'slots';
const HELD = 'held';
const REQUESTS = 'requests';
const BACKOFF = 'backoff';
/** Poll period while waiting for a permit, beside the directory watch (which may miss events on some filesystems). */
const WAIT_POLL_MS = 250;
/** Longest a process goes between two reaper sweeps while it waits for a permit. */
const REAP_EVERY_MS = 5_000;

/**
 * The account's shared 429 back-off, a `RateGate` for the service client: one back-off per kind of call
 * after the service answered 429 with Retry-After, shared by every worker that points at the same
 * directory (REELFLOW_ACCOUNT_LIMITS_DIR). A back-off is the symlink `backoff/<kind>` whose target is
 * the time it ends, replaced by rename(2): nothing in memory to lose when a worker dies.
 *
 * Caps on jobs in flight are not here: they are the route store's slots, shared by every worker of the
 * store (REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY; docs/decisions/account-slots.md).
 * The filesystem permits of 0.3.0 (`concurrency`, `tryAcquire`, `acquire`, `attachRequest`, `release`,
 * `held`) still work but no reelflow worker takes them; they are deprecated and go in the next minor release.
 */
export class AccountLimits implements RateGate {
  readonly dir: string;
  /** @deprecated The filesystem permits' cap; removed in the next minor release. */
  readonly concurrency: number | undefined;
  private readonly now: () => number;
  private readonly reapAfterMs: number;
  private readonly orphanAfterMs: number;
  private lastReap = 0;
  private ready?: Promise<void>;
  private watcher?: fs.FSWatcher;
  private readonly wakers = new Set<() => void>();

  constructor(private readonly options: AccountLimitsOptions) {
    this.dir = path.resolve(options.dir);
    this.concurrency = options.concurrency;
    this.now = options.now ?? Date.now;
    this.reapAfterMs = options.reapAfterMs ?? 30_000;
    this.orphanAfterMs = options.orphanAfterMs ?? 30 * 60_000;
  }

  /**
   * Whether the filesystem permits are capped.
   * @deprecated With the permits; removed in the next minor release.
   */
  get capped(): boolean {
    return this.concurrency !== undefined;
  }

  private prepare(): Promise<void> {
    return (this.ready ??= Promise.all(
      [SLOTS, HELD, REQUESTS, BACKOFF].map((sub) => fs.promises.mkdir(path.join(this.dir, sub), { recursive: true })),
    ).then(() => undefined));
  }

  /**
   * Takes a permit for `holder` if one is free (or it holds one already); false when all are taken.
   * Always true without a cap.
   * @deprecated Caps are the route store's slots; removed in the next minor release.
   */
  async tryAcquire(holder: PermitHolder): Promise<boolean> {
    const limit = this.concurrency;
    if (limit === undefined) return true;
    await this.prepare();
    const h = hashOf(holder.idempotencyKey);
    if ((await this.slotOf(h)) !== undefined) return true;
    const taken = new Set(await fs.promises.readdir(path.join(this.dir, SLOTS)));
    const free = [...Array(limit).keys()].filter((i) => !taken.has(String(i)));
    // Start at a random free slot so concurrent acquirers rarely race for the same one.
    const offset = free.length ? Math.floor(Math.random() * free.length) : 0;
    const target = JSON.stringify({ h, w: holder.workflowId, at: this.now() } satisfies SlotHolder);
    for (let n = 0; n < free.length; n += 1) {
      const slot = String(free[(offset + n) % free.length]);
      try {
        await fs.promises.symlink(target, path.join(this.dir, SLOTS, slot));
      } catch (error) {
        if (codeOf(error) === 'EEXIST') continue;
        throw error;
      }
      await replaceLink(path.join(this.dir, HELD, h), slot);
      return true;
    }
    await this.reapIfDue();
    return false;
  }

  /**
   * Waits for a permit for `holder`, up to `maxWaitMs` (default: until `signal` aborts); true once it
   * is held, false when the wait ran out. `onWait` is called about every second while waiting
   * (activities heartbeat there).
   * @deprecated Caps are the route store's slots; removed in the next minor release.
   */
  async acquire(
    holder: PermitHolder,
    options: { signal?: AbortSignal; maxWaitMs?: number; onWait?: () => void } = {},
  ): Promise<boolean> {
    const deadline = options.maxWaitMs === undefined ? Infinity : this.now() + options.maxWaitMs;
    let beat = this.now();
    for (;;) {
      options.signal?.throwIfAborted();
      if (await this.tryAcquire(holder)) return true;
      const left = deadline - this.now();
      if (left <= 0) return false;
      await this.released(Math.min(WAIT_POLL_MS, left), options.signal);
      if (this.now() - beat >= 1_000) {
        beat = this.now();
        options.onWait?.();
      }
    }
  }

  /**
   * Records the request id the holder's submit created (the reaper asks the service about it).
   * @deprecated With the permits; removed in the next minor release.
   */
  async attachRequest(idempotencyKey: string, requestId: string): Promise<void> {
    if (!this.capped) return;
    await this.prepare();
    await replaceLink(path.join(this.dir, REQUESTS, hashOf(idempotencyKey)), requestId);
  }

  /**
   * Frees the permit of `idempotencyKey`; false when it held none (released already, or reaped).
   * @deprecated With the permits; removed in the next minor release.
   */
  async release(idempotencyKey: string): Promise<boolean> {
    if (!this.capped) return false;
    await this.prepare();
    const h = hashOf(idempotencyKey);
    const slot = await this.slotOf(h);
    let released = false;
    if (slot !== undefined) released = await this.free(slot, h);
    await unlinkIfThere(path.join(this.dir, HELD, h));
    await unlinkIfThere(path.join(this.dir, REQUESTS, h));
    return released;
  }

  /**
   * Permits held now.
   * @deprecated With the permits; removed in the next minor release.
   */
  async held(): Promise<number> {
    if (!this.capped) return 0;
    await this.prepare();
    return (await fs.promises.readdir(path.join(this.dir, SLOTS))).length;
  }

  async wait(kind: CallKind, signal?: AbortSignal): Promise<void> {
    const until = await this.backoffUntil(kind);
    const left = until - this.now();
    // A little spread, so the calls that waited do not all arrive in the same millisecond.
    if (left > 0) await sleep(left + Math.floor(Math.random() * Math.min(250, left / 5)), undefined, { signal });
  }

  limited(kind: CallKind, retryAfterMs: number): void {
    // Best effort: the caller backs off on its own anyway; this tells the other callers.
    void this.backOff(kind, this.now() + retryAfterMs).catch(() => undefined);
  }

  /** When calls of `kind` may go out again (0: now). */
  async backoffUntil(kind: CallKind): Promise<number> {
    try {
      return Number(await fs.promises.readlink(path.join(this.dir, BACKOFF, kind))) || 0;
    } catch (error) {
      if (codeOf(error) === 'ENOENT') return 0;
      throw error;
    }
  }

  /** Extends the shared back-off of `kind` to `untilMs` (never shortens it). */
  async backOff(kind: CallKind, untilMs: number): Promise<void> {
    await this.prepare();
    if ((await this.backoffUntil(kind)) >= untilMs) return;
    await replaceLink(path.join(this.dir, BACKOFF, kind), String(Math.round(untilMs)));
  }

  /** Stops watching the directory (only a deprecated permit wait watches it). */
  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    for (const wake of this.wakers) wake();
  }

  /** Resolves when a slot was removed (by any process) or after `ms`. */
  private released(ms: number, signal?: AbortSignal): Promise<void> {
    this.watch();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private watch(): void {
    if (this.watcher) return;
    try {
      this.watcher = fs.watch(path.join(this.dir, SLOTS), { persistent: false }, () => {
        for (const wake of [...this.wakers]) wake();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      // No watch on this filesystem: the poll period alone wakes waiters.
    }
  }

  /** The slot `h` holds, if its index still points at a slot that names it. */
  private async slotOf(h: string): Promise<string | undefined> {
    const slot = await readLink(path.join(this.dir, HELD, h));
    if (slot === undefined) return undefined;
    const holder = await this.holderOf(slot);
    return holder?.h === h ? slot : undefined;
  }

  private async holderOf(slot: string): Promise<SlotHolder | undefined> {
    const target = await readLink(path.join(this.dir, SLOTS, slot));
    if (target === undefined) return undefined;
    try {
      return JSON.parse(target) as SlotHolder;
    } catch {
      return { h: '', w: '', at: 0 };
    }
  }

  /** Removes `slot` if `h` still holds it. */
  private async free(slot: string, h: string): Promise<boolean> {
    const holder = await this.holderOf(slot);
    if (holder?.h !== h) return false;
    return unlinkIfThere(path.join(this.dir, SLOTS, slot));
  }

  /**
   * Frees permits whose holder will never release them: the job is terminal at the service (its
   * pipeline was terminated, or its worker lost the release), or no submit recorded a request id
   * long after the permit was taken. At most one sweep every few seconds per process.
   */
  private async reapIfDue(): Promise<void> {
    const now = this.now();
    if (now - this.lastReap < REAP_EVERY_MS) return;
    this.lastReap = now;
    for (const slot of await fs.promises.readdir(path.join(this.dir, SLOTS))) {
      const holder = await this.holderOf(slot);
      if (!holder || now - holder.at < this.reapAfterMs) continue;
      const requestId = holder.h ? await readLink(path.join(this.dir, REQUESTS, holder.h)) : undefined;
      let stale: boolean;
      if (requestId === undefined) stale = now - holder.at >= this.orphanAfterMs;
      else stale = (await this.options.isTerminal?.(requestId).catch(() => false)) ?? false;
      if (!stale) continue;
      if (await this.free(slot, holder.h)) {
        await unlinkIfThere(path.join(this.dir, HELD, holder.h));
        await unlinkIfThere(path.join(this.dir, REQUESTS, holder.h));
      }
    }
  }
}

function hashOf(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 40);
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

async function readLink(file: string): Promise<string | undefined> {
  try {
    return await fs.promises.readlink(file);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return undefined;
    throw error;
  }
}

async function unlinkIfThere(file: string): Promise<boolean> {
  try {
    await fs.promises.unlink(file);
    return true;
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return false;
    throw error;
  }
}

/** Points the symlink `file` at `target`, replacing any earlier one atomically (rename over it). */
async function replaceLink(file: string, target: string): Promise<void> {
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await fs.promises.symlink(target, temporary);
  try {
    await fs.promises.rename(temporary, file);
  } catch (error) {
    await unlinkIfThere(temporary);
    throw error;
  }
}
