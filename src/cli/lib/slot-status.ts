import { existsSync } from 'node:fs';
import { loadAccountLimits, loadRouteStoreSettings, type Env } from '../../config';
import { openRouteStore } from '../../routing/open-store';
import type { SlotCaps, SlotSnapshot } from '../../routing/slot-store';

/**
 * The account's slots as `reelflow status` shows them under a pipeline or batch: slots in use against
 * each cap, the waiters by priority and fairness key, and the share `key` (the batch's or pipeline's
 * fairness key) holds. Read from the route store the workers share; nothing when no cap is set or no
 * store exists yet, one line saying so when the store does not answer (status never fails for it).
 */
export async function slotLines(key: string, env?: Env): Promise<string[]> {
  let caps: SlotCaps;
  let location;
  try {
    const account = loadAccountLimits(env);
    caps = { ...(account.concurrency !== undefined ? { account: account.concurrency } : {}), models: account.models };
    location = loadRouteStoreSettings(env).location;
  } catch {
    return [];
  }
  if (caps.account === undefined && Object.keys(caps.models).length === 0) return [];
  if (location.backend === 'sqlite' && !existsSync(location.path)) return [];
  const store = openRouteStore(location, { postgres: { statementTimeoutMs: 3_000, maxConnections: 1 } });
  try {
    return formatSlotLines(await store.slots.snapshot(), caps, key);
  } catch {
    return ['slots: the route store does not answer (reelflow doctor checks it)'];
  } finally {
    await store.close().catch(() => undefined);
  }
}

/** The lines of `slotLines`, from a snapshot. */
export function formatSlotLines(snapshot: SlotSnapshot, caps: SlotCaps, key: string): string[] {
  const held = Object.values(snapshot.heldByModel).reduce((sum, n) => sum + n, 0);
  const scopes = [
    `account ${held}/${caps.account ?? 'no cap'}`,
    ...Object.entries(caps.models).map(([model, cap]) => `${model} ${snapshot.heldByModel[model] ?? 0}/${cap}`),
  ];
  const byPriority = new Map<number, { total: number; keys: string[] }>();
  for (const w of snapshot.waiting) {
    const entry = byPriority.get(w.priority) ?? { total: 0, keys: [] };
    entry.total += w.count;
    entry.keys.push(`${w.fairnessKey} ${w.count}`);
    byPriority.set(w.priority, entry);
  }
  const waiting = [...byPriority.entries()]
    .sort(([a], [b]) => a - b)
    .map(([priority, entry]) => `priority ${priority}: ${entry.total} (${entry.keys.join(', ')})`);
  const mine = snapshot.heldByKey[key] ?? 0;
  const mineWaiting = snapshot.waiting.filter((w) => w.fairnessKey === key).reduce((sum, w) => sum + w.count, 0);
  const share = held > 0 ? ` (${Math.round((100 * mine) / held)}%)` : '';
  return [
    `slots: ${scopes.join(' · ')}`,
    `waiting for a slot: ${waiting.length ? waiting.join(' · ') : 'none'}`,
    `${key} holds ${mine} of the ${held} in use${share}, ${mineWaiting} waiting`,
  ];
}
