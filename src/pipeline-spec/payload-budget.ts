import { MEDIA_LIMITS } from '../contract';
import { PayloadBudgetError } from './errors';

/**
 * The size guard: nothing reelflow hands to Temporal may exceed MEDIA_LIMITS.payloadBudgetBytes
 * (Temporal refuses payloads over 2 MB, and every byte in history is replayed). Pure.
 */

/** One field and its serialised size. */
export interface FieldSize {
  path: string;
  bytes: number;
}

/** Serialised size in bytes (UTF-8 JSON), as Temporal's JSON payload converter would write it. */
export function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value) ?? '').length;
}

/** Every leaf (string, number, ...) with its path and serialised size, largest first. */
export function largestFields(value: unknown, limit = 5): FieldSize[] {
  const sizes: FieldSize[] = [];
  const walk = (item: unknown, at: (string | number)[]) => {
    if (Array.isArray(item)) item.forEach((child, i) => walk(child, [...at, i]));
    else if (typeof item === 'object' && item !== null)
      for (const [key, child] of Object.entries(item)) walk(child, [...at, key]);
    else sizes.push({ path: at.join('.') || '(root)', bytes: jsonBytes(item) });
  };
  walk(value, []);
  return sizes.sort((a, b) => b.bytes - a.bytes).slice(0, limit);
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

function fixFor(path: string): string {
  if (/(^|\.)prompt$/.test(path)) return 'shorten the prompt';
  if (/_urls?(\.\d+)?$/.test(path))
    return 'give a local file path or an https URL instead of inline data (local files and large data URIs go into the media store)';
  return 'make it smaller';
}

function describe(label: string, bytes: number, budget: number, largest: FieldSize[]): string {
  // A field far smaller than the excess is not what to change: say so rather than advise it.
  const fields = largest
    .map(
      (f) =>
        `  ${f.path}: ${kib(f.bytes)} — ${f.bytes * 16 < bytes - budget ? 'small: not the cause' : fixFor(f.path)}`,
    )
    .join('\n');
  return (
    `${label} is ${kib(bytes)} (${bytes} bytes) serialised, more than the ${kib(budget)} reelflow hands to Temporal in one payload; nothing was started.\n` +
    `Largest fields:\n${fields}\n` +
    'Fix: change the fields above. Many pipelines are not limited by this: `reelflow batch <manifest>` keeps its manifest ' +
    '(CSV, JSON Lines or JSON, any number of rows) in the media store, never in a payload (docs/batches.md).'
  );
}

/** Throws PayloadBudgetError when `value` serialises to more than `budget` bytes. */
export function assertWithinBudget(
  value: unknown,
  label: string,
  budget: number = MEDIA_LIMITS.payloadBudgetBytes,
): void {
  const bytes = jsonBytes(value);
  if (bytes <= budget) return;
  const largest = largestFields(value);
  throw new PayloadBudgetError(describe(label, bytes, budget, largest), label, bytes, budget, largest);
}
