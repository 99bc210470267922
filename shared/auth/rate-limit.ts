import { ApiError } from '../errors.ts';

/** A limit's 429 `slow_down`, saying when `bucket` has a token for `key` again (Retry-After, in seconds). */
export const slowDown = (message: string, bucket: TokenBucket, key: string): ApiError =>
  new ApiError('rate_limit_error', 'slow_down', message, { headers: { 'retry-after': String(bucket.retryAfter(key)) } });

/**
 * In-memory token bucket. The local token endpoint is one process, so its own limit lives
 * here; on AWS, Cognito rate-limits its token endpoint itself.
 */
export class TokenBucket {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now() / 1000,
  ) {}

  /** Takes one token for `key`; false when the bucket is empty. */
  take(key: string): boolean {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: t };
    b.tokens = Math.min(this.burst, b.tokens + (t - b.at) * this.ratePerSecond);
    b.at = t;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    this.buckets.set(key, b);
    if (this.buckets.size > 10_000) this.evictFull(t);
    return ok;
  }

  /** Whole seconds until `key` has a token again (at least 1): a refused request's Retry-After. */
  retryAfter(key: string): number {
    const b = this.buckets.get(key);
    const tokens = b ? Math.min(this.burst, b.tokens + (this.now() - b.at) * this.ratePerSecond) : this.burst;
    return Math.max(1, Math.ceil((1 - tokens) / this.ratePerSecond));
  }

  /** Gives back one token taken from `key` (up to the burst): the request turned out not to count. */
  refund(key: string): void {
    const b = this.buckets.get(key);
    if (b) b.tokens = Math.min(this.burst, b.tokens + 1);
  }

  private evictFull(t: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + (t - b.at) * this.ratePerSecond >= this.burst) this.buckets.delete(k);
    }
  }
}
