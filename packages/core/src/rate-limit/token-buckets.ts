/** What one request may do: go ahead, or wait this long for the next token. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

export interface RateLimit {
  /** Tokens added per second; the sustained rate. */
  perSecond: number;
  /** Tokens a bucket holds at most; the burst a quiet caller may spend at once. */
  burst: number;
}

interface Bucket {
  tokens: number;
  updatedAtMs: number;
}

/**
 * One token bucket per caller (PRODUCT.md §7: a rate per second plus a burst). Written by hand
 * because @nestjs/throttler counts hits in fixed windows, which lets a caller spend twice its
 * limit across a window edge and has no separate burst. Buckets live in this process: with
 * several api replicas each enforces the limit on its own share of the traffic.
 *
 * Memory is bounded: a bucket that has refilled is the same as no bucket, so when `maxKeys` is
 * reached the full ones are dropped first, then the oldest.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limit: RateLimit,
    private readonly maxKeys = 100_000,
  ) {
    if (!(limit.perSecond > 0) || !(limit.burst >= 1)) {
      throw new RangeError(`a rate limit needs perSecond > 0 and burst >= 1, got ${limit.perSecond}/${limit.burst}`);
    }
  }

  take(key: string, nowMs: number): RateDecision {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) this.evict(nowMs);
      bucket = { tokens: this.limit.burst, updatedAtMs: nowMs };
      this.buckets.set(key, bucket);
    } else {
      // A clock stepping back must not drain or overfill a bucket.
      const elapsedMs = Math.max(0, nowMs - bucket.updatedAtMs);
      bucket.tokens = Math.min(this.limit.burst, bucket.tokens + (elapsedMs * this.limit.perSecond) / 1000);
      bucket.updatedAtMs = Math.max(bucket.updatedAtMs, nowMs);
    }

    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true };
    }
    // The epsilon keeps floating-point dust (0.996000…01 tokens) from adding a whole millisecond.
    const waitMs = ((1 - bucket.tokens) * 1000) / this.limit.perSecond;
    return { allowed: false, retryAfterMs: Math.max(1, Math.ceil(waitMs - 1e-6)) };
  }

  get size(): number {
    return this.buckets.size;
  }

  private evict(nowMs: number): void {
    const refillMs = (this.limit.burst * 1000) / this.limit.perSecond;
    for (const [key, bucket] of this.buckets) {
      if (nowMs - bucket.updatedAtMs >= refillMs) this.buckets.delete(key);
    }
    if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
  }
}
