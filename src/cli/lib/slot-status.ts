import { existsSync } from 'node:fs';
import { loadAccountLimits, loadRouteStoreSettings, slotCapsOf, type Env } from '../../config';
import { openRouteStore } from '../../routing/open-store';
import type { SlotCaps, SlotSnapshot } from '../../routing/slot-store';
import type { RouteStore } from '../../routing/store';

/** The account's slots as `reelflow status --json` prints them (`slots`), for one pipeline's or batch's fairness key. */
export interface SlotStatus {
  /** The caps of this environment; null when it sets none (the workers' are not stored: only their slots are). */
  caps: SlotCaps | null;
  /** Slots in use (granted or held): the account's sum and each capped model's (each model's in use, caps unknown). */
  inUse: { account: number; models: Record<string, number> };
  /** Waiters by priority (1 highest), then fairness key. */
  waiting: SlotSnapshot['waiting'];
  fairnessKey: string;
  /** Slots `fairnessKey` holds, and its submissions waiting. */
  held: number;
  waitingForKey: number;
}

/** What `readSlotStatus` finds: nothing (no slot in use or waiting, no store), the slots, or that the store did not answer. */
export type SlotStatusRead = undefined | SlotStatus | { unavailable: string };

const UNAVAILABLE = 'the route store does not answer (reelflow doctor checks it)';
const CAP_VARIABLES = 'REELFLOW_ACCOUNT_CONCURRENCY, REELFLOW_MODEL_CONCURRENCY';

/**
 * The account's slots under a pipeline or batch: slots in use against each cap, the waiters by priority
 * and fairness key, and what `key` (the batch's or pipeline's fairness key) holds. Read from the route
 * store the workers share. The caps are the workers' settings, not stored: when this environment sets
 * none (an operator's shell), the slots are still shown if any are in use or waiting, caps unknown.
 * Undefined when there is nothing to show or no store exists yet; `unavailable` when the store does not
 * answer and caps are set (status never fails for it).
 */
export async function readSlotStatus(key: string, env?: Env): Promise<SlotStatusRead> {
  let caps: SlotCaps | null;
  let location;
  try {
    caps = slotCapsOf(loadAccountLimits(env)) ?? null;
    location = loadRouteStoreSettings(env).location;
  } catch {
    return undefined;
  }
  if (location.backend === 'sqlite' && !existsSync(location.path)) return undefined;
  let store: RouteStore | undefined;
  try {
    // Inside the try: a PostgreSQL store without its optional `pg` package throws here.
    store = openRouteStore(location, { postgres: { statementTimeoutMs: 3_000, maxConnections: 1 } });
    const snapshot = await store.slots.snapshot();
    // Uncapped workers take no slots: with no caps here and none in the store, there is nothing to show.
    if (!caps && Object.keys(snapshot.heldByModel).length === 0 && snapshot.waiting.length === 0) return undefined;
    return slotStatusOf(snapshot, caps, key);
  } catch {
    return caps ? { unavailable: UNAVAILABLE } : undefined;
  } finally {
    await store?.close().catch(() => undefined);
  }
}

/** The slots of `snapshot` under `caps` (null: unknown here), as `key` sees them. */
export function slotStatusOf(snapshot: SlotSnapshot, caps: SlotCaps | null, key: string): SlotStatus {
  const models = caps
    ? Object.fromEntries(Object.keys(caps.models).map((model) => [model, snapshot.heldByModel[model] ?? 0]))
    : { ...snapshot.heldByModel };
  return {
    caps,
    inUse: { account: Object.values(snapshot.heldByModel).reduce((sum, n) => sum + n, 0), models },
    waiting: [...snapshot.waiting].sort((a, b) => a.priority - b.priority),
    fairnessKey: key,
    held: snapshot.heldByKey[key] ?? 0,
    waitingForKey: snapshot.waiting.filter((w) => w.fairnessKey === key).reduce((sum, w) => sum + w.count, 0),
  };
}

/** The slots in use against each cap, or in use alone when the caps are unknown here. */
function scopeLine({ caps, inUse }: SlotStatus): string {
  if (!caps) {
    const scopes = [`account ${inUse.account}`, ...Object.entries(inUse.models).map(([model, n]) => `${model} ${n}`)];
    return `slots in use: ${scopes.join(' · ')} (caps unknown: set the workers' ${CAP_VARIABLES} here too)`;
  }
  const scopes = [
    `account ${inUse.account}/${caps.account ?? 'no cap'}`,
    ...Object.entries(caps.models).map(([model, cap]) => `${model} ${inUse.models[model] ?? 0}/${cap}`),
  ];
  return `slots: ${scopes.join(' · ')}`;
}

/** The lines `reelflow status` prints for a `readSlotStatus` answer (none when it found nothing). */
export function slotStatusLines(read: SlotStatusRead): string[] {
  if (read === undefined) return [];
  if ('unavailable' in read) return [`slots: ${read.unavailable}`];
  const { inUse, fairnessKey: key } = read;
  const byPriority = new Map<number, { total: number; keys: string[] }>();
  for (const w of read.waiting) {
    const entry = byPriority.get(w.priority) ?? { total: 0, keys: [] };
    entry.total += w.count;
    entry.keys.push(`${w.fairnessKey} ${w.count}`);
    byPriority.set(w.priority, entry);
  }
  const waiting = [...byPriority.entries()].map(
    ([priority, entry]) => `priority ${priority}: ${entry.total} (${entry.keys.join(', ')})`,
  );
  const share = inUse.account > 0 ? ` (${Math.round((100 * read.held) / inUse.account)}%)` : '';
  return [
    scopeLine(read),
    `waiting for a slot: ${waiting.length ? waiting.join(' · ') : 'none'}`,
    `${key} holds ${read.held} of the ${inUse.account} in use${share}, ${read.waitingForKey} waiting`,
  ];
}
