import { ServiceProblem } from './errors';

/** Quote admission limits (not in the spec: "Request rate limits: not shown"). */
export interface QuoteLimits {
  /** Sustained quotes per minute per API key. */
  perMinute: number;
  /** Quotes a key may make at once after being idle (bucket size). */
  burst: number;
  /** Quotes being priced at once across the service (each may download up to 512 MiB). */
  concurrency: number;
}

export const DEFAULT_QUOTE_LIMITS: QuoteLimits = { perMinute: 120, burst: 30, concurrency: 4 };

/**
 * Token bucket per API key plus a service-wide bound on quotes in progress. A refused quote is
 * 429 `rate_limited` with `Retry-After` (whole seconds until a token is back, or 1 when only the
 * concurrency bound refused it), before anything is fetched.
 */
export class QuoteLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private running = 0;

  constructor(
    private readonly limits: QuoteLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /** Admits one quote of `keyId`, or throws 429; call the returned function when it is done. */
  admit(keyId: string): () => void {
    const now = this.now();
    const msPerToken = 60_000 / this.limits.perMinute;
    const bucket = this.buckets.get(keyId) ?? { tokens: this.limits.burst, at: now };
    bucket.tokens = Math.min(this.limits.burst, bucket.tokens + (now - bucket.at) / msPerToken);
    bucket.at = now;
    this.buckets.set(keyId, bucket);
    if (bucket.tokens < 1) {
      const retryAfterSeconds = Math.max(1, Math.ceil(((1 - bucket.tokens) * msPerToken) / 1000));
      throw new ServiceProblem(
        'rate_limited',
        `more than ${this.limits.perMinute} quotes per minute with this API key; retry after ${retryAfterSeconds} s`,
        { retryAfterSeconds },
      );
    }
    if (this.running >= this.limits.concurrency) {
      throw new ServiceProblem(
        'rate_limited',
        `${this.limits.concurrency} quotes are being priced already; retry shortly`,
        { retryAfterSeconds: 1 },
      );
    }
    bucket.tokens -= 1;
    this.running += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
    };
  }
}
