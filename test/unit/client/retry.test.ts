import { backoffDelayMs, parseRetryAfterMs } from '../../../src/client';

describe('retry rules', () => {
  const rule = { maxAttempts: 5, initialDelayMs: 100, maxDelayMs: 1000, jitter: 0.5 };

  it('grows exponentially to the cap', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5].map((attempt) => backoffDelayMs(rule, attempt, undefined, mid))).toEqual([
      100, 200, 400, 800, 1000,
    ]);
  });

  it('spreads each delay by the jitter share', () => {
    expect(backoffDelayMs(rule, 1, undefined, () => 0)).toBe(50);
    expect(backoffDelayMs(rule, 1, undefined, () => 0.999999)).toBe(150);
  });

  it('waits at least the server’s Retry-After', () => {
    expect(backoffDelayMs(rule, 1, 3000, () => 0.5)).toBe(3000);
    expect(backoffDelayMs(rule, 5, 10, () => 0.5)).toBe(1000);
  });

  it('parses Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfterMs('2')).toBe(2000);
    expect(parseRetryAfterMs('0.5')).toBe(500);
    expect(parseRetryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(parseRetryAfterMs('soon')).toBeUndefined();
    expect(parseRetryAfterMs(undefined)).toBeUndefined();
  });
});
