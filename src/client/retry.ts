import type { RetryRule } from './types';

/** Retry rules as data: idempotent calls retry freely; submit retries only what provably did not land. */
export const DEFAULT_RETRY: RetryRule = { maxAttempts: 5, initialDelayMs: 200, maxDelayMs: 10_000, jitter: 0.2 };
export const DEFAULT_SUBMIT_RETRY: RetryRule = { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 15_000, jitter: 0.2 };

/** Longest `Retry-After` the client is willing to wait in-process; beyond it the error surfaces. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Delay before attempt `attempt + 1` (attempt counts from 1): exponential from `initialDelayMs`,
 * capped at `maxDelayMs`, with ± `jitter` spread; a server's Retry-After wins when it is longer.
 */
export function backoffDelayMs(
  rule: RetryRule,
  attempt: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const exponential = Math.min(rule.maxDelayMs, rule.initialDelayMs * 2 ** (attempt - 1));
  const spread = exponential * rule.jitter;
  const jittered = Math.max(0, exponential - spread + random() * 2 * spread);
  return retryAfterMs === undefined ? Math.round(jittered) : Math.max(Math.round(jittered), retryAfterMs);
}

/** Parses a Retry-After header (delta seconds or an HTTP date) into milliseconds. */
export function parseRetryAfterMs(value: string | undefined, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export function resolveRule(base: RetryRule, override?: Partial<RetryRule>): RetryRule {
  return { ...base, ...override };
}
