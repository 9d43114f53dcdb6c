import { AppError } from '@herald/contracts';
import { Clock, CLOCK, HERALD_CONFIG, HeraldConfig, TokenBuckets } from '@herald/core';
import { Inject, Injectable } from '@nestjs/common';

/**
 * PRODUCT.md §7: each API key may make HERALD_RATE_LIMIT_PER_SECOND requests per second, with
 * bursts up to HERALD_RATE_LIMIT_BURST; 0 turns limiting off. Over the limit the request is
 * answered 429-00 with Retry-After in whole seconds (rounded up, so a client that waits that
 * long is let through).
 */
@Injectable()
export class ApiKeyRateLimiter {
  private readonly buckets: TokenBuckets | null;

  constructor(
    @Inject(HERALD_CONFIG) config: HeraldConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    const { perSecond, burst } = config.rateLimit;
    this.buckets = perSecond > 0 ? new TokenBuckets({ perSecond, burst }) : null;
  }

  /** Spends one of the key's tokens, or throws 429-00 when it has none. */
  spend(keyId: string): void {
    if (!this.buckets) return;
    const decision = this.buckets.take(keyId, this.clock.now().getTime());
    if (decision.allowed) return;
    const seconds = Math.ceil(decision.retryAfterMs / 1000);
    throw new AppError('TOO_MANY_REQUESTS', `This API key is over its rate limit; retry in ${seconds} s.`, {
      headers: { 'retry-after': String(seconds) },
    });
  }
}
