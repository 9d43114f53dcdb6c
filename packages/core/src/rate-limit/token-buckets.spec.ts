import { TokenBuckets } from './token-buckets';

describe('TokenBuckets (PRODUCT.md §7 rate limit per API key)', () => {
  it('lets a quiet caller spend the whole burst at once, then refuses', () => {
    const buckets = new TokenBuckets({ perSecond: 10, burst: 3 });
    expect([1, 2, 3].map(() => buckets.take('key', 0).allowed)).toEqual([true, true, true]);
    expect(buckets.take('key', 0)).toEqual({ allowed: false, retryAfterMs: 100 });
  });

  it('refills at the sustained rate and says exactly when the next token arrives', () => {
    const buckets = new TokenBuckets({ perSecond: 4, burst: 1 });
    expect(buckets.take('key', 1_000).allowed).toBe(true);
    expect(buckets.take('key', 1_100)).toEqual({ allowed: false, retryAfterMs: 150 });
    expect(buckets.take('key', 1_249)).toEqual({ allowed: false, retryAfterMs: 1 });
    expect(buckets.take('key', 1_250).allowed).toBe(true);
    expect(buckets.take('key', 1_250).allowed).toBe(false);
  });

  it('never holds more than the burst, however long the caller was quiet', () => {
    const buckets = new TokenBuckets({ perSecond: 100, burst: 2 });
    buckets.take('key', 0);
    const afterAnHour = [1, 2, 3].map(() => buckets.take('key', 3_600_000).allowed);
    expect(afterAnHour).toEqual([true, true, false]);
  });

  it('keeps callers apart', () => {
    const buckets = new TokenBuckets({ perSecond: 1, burst: 1 });
    expect(buckets.take('a', 0).allowed).toBe(true);
    expect(buckets.take('a', 0).allowed).toBe(false);
    expect(buckets.take('b', 0).allowed).toBe(true);
  });

  it('neither drains nor overfills when the clock steps back', () => {
    const buckets = new TokenBuckets({ perSecond: 1, burst: 2 });
    buckets.take('key', 10_000);
    expect(buckets.take('key', 5_000).allowed).toBe(true);
    expect(buckets.take('key', 5_000).allowed).toBe(false);
    // The bucket's time stayed at 10 s, so the refill counts from there, not from 5 s.
    expect(buckets.take('key', 10_999).allowed).toBe(false);
    expect(buckets.take('key', 11_000).allowed).toBe(true);
  });

  it('bounds its memory: refilled buckets go first, then the oldest', () => {
    const buckets = new TokenBuckets({ perSecond: 1, burst: 1 }, 3);
    buckets.take('idle', 0);
    buckets.take('busy-1', 900);
    buckets.take('busy-2', 900);
    buckets.take('new', 1_000); // 'idle' has refilled by now; it is the one dropped
    expect(buckets.size).toBe(3);
    expect(buckets.take('busy-1', 1_000).allowed).toBe(false);
    expect(buckets.take('busy-2', 1_000).allowed).toBe(false);

    buckets.take('newer', 1_000); // none refilled: the oldest ('busy-1') goes
    expect(buckets.size).toBe(3);
    expect(buckets.take('busy-1', 1_000).allowed).toBe(true);
  });

  it.each([[{ perSecond: 0, burst: 1 }], [{ perSecond: 1, burst: 0 }], [{ perSecond: Number.NaN, burst: 1 }]])(
    'refuses a limit that could never let a request through: %p',
    (limit) => {
      expect(() => new TokenBuckets(limit)).toThrow(RangeError);
    },
  );
});
