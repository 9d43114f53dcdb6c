import { LATENCY_BUCKET_BOUNDS, latencyBucketOf, latencyOfBucket, latencyPercentile, type LatencyHistogram } from './latency-histogram';

/** A histogram of `durations` as the statistics table stores one: bucket numbers ascending, with counts. */
function histogramOf(durations: number[]): LatencyHistogram {
  const counts = new Map<number, number>();
  for (const duration of durations) counts.set(latencyBucketOf(duration), (counts.get(latencyBucketOf(duration)) ?? 0) + 1);
  const buckets = [...counts.keys()].sort((a, b) => a - b);
  return { buckets, counts: buckets.map((bucket) => counts.get(bucket)!) };
}

/** The nearest-rank percentile of the durations themselves. */
function exactPercentile(durations: number[], quantile: number): number {
  const sorted = [...durations].sort((a, b) => a - b);
  return sorted[Math.ceil(quantile * sorted.length) - 1];
}

/** A deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

describe('the latency histogram of delivery statistics (PRODUCT.md §16)', () => {
  it('has ascending whole-millisecond bounds from 0 past the longest attempt (300 s), each at most 1.1 times the one before', () => {
    expect(LATENCY_BUCKET_BOUNDS[0]).toBe(0);
    expect(LATENCY_BUCKET_BOUNDS.slice(0, 22)).toEqual([...Array.from({ length: 21 }, (_, i) => i), 22]);
    expect(LATENCY_BUCKET_BOUNDS[LATENCY_BUCKET_BOUNDS.length - 2]).toBeGreaterThan(300_000);
    for (let k = 1; k < LATENCY_BUCKET_BOUNDS.length; k++) {
      const [lower, upper] = [LATENCY_BUCKET_BOUNDS[k - 1], LATENCY_BUCKET_BOUNDS[k]];
      expect(Number.isInteger(upper)).toBe(true);
      expect(upper).toBeGreaterThan(lower);
      // The largest duration of bucket k is upper − 1.
      expect(upper - 1).toBeLessThanOrEqual(Math.max(lower, lower * 1.1));
    }
    expect(LATENCY_BUCKET_BOUNDS).toHaveLength(126);
  });

  it('numbers buckets as width_bucket does: the count of bounds at or below the duration', () => {
    for (const duration of [0, 1, 19, 20, 21, 22, 23, 99, 1_000, 14_999, 300_000, 356_461, 356_462, 10_000_000]) {
      expect(latencyBucketOf(duration)).toBe(LATENCY_BUCKET_BOUNDS.filter((bound) => bound <= duration).length);
    }
    expect(latencyBucketOf(-5)).toBe(1);
  });

  it('stands for every duration of a bucket within 5% (every duration from 1 ms to 330 s checked)', () => {
    let worst = 0;
    for (let duration = 1; duration <= 330_000; duration++) {
      const error = Math.abs(latencyOfBucket(latencyBucketOf(duration)) - duration) / duration;
      worst = Math.max(worst, error);
    }
    expect(worst).toBeLessThan(0.05);
    expect(latencyOfBucket(latencyBucketOf(0))).toBe(0);
    expect(() => latencyOfBucket(0)).toThrow(RangeError);
    expect(() => latencyOfBucket(LATENCY_BUCKET_BOUNDS.length + 1)).toThrow(RangeError);
  });

  it.each([
    ['uniform 1 ms … 2 s', (next: () => number) => Math.floor(next() * 2_000) + 1],
    ['log-normal around 80 ms', (next: () => number) => Math.max(1, Math.round(Math.exp(Math.log(80) + 0.9 * gaussian(next))))],
    ['fast local receiver, 0 … 12 ms', (next: () => number) => Math.floor(next() * 13)],
    [
      'two modes: 40 ms and 9 s',
      (next: () => number) => (next() < 0.9 ? 30 + Math.floor(next() * 20) : 8_000 + Math.floor(next() * 2_000)),
    ],
  ])('gives p50 and p95 within ±5%% of the exact percentiles: %s', (_name, draw) => {
    for (let seed = 1; seed <= 20; seed++) {
      const next = random(seed);
      const durations = Array.from({ length: 1 + Math.floor(next() * 5_000) }, () => draw(next));
      const histogram = histogramOf(durations);
      for (const quantile of [0.5, 0.95]) {
        const exact = exactPercentile(durations, quantile);
        const estimate = latencyPercentile(histogram, quantile)!;
        expect(Math.abs(estimate - exact)).toBeLessThanOrEqual(exact * 0.05);
      }
    }
  });

  it('has no percentile for an empty histogram and refuses quantiles outside (0, 1]', () => {
    expect(latencyPercentile({ buckets: [], counts: [] }, 0.5)).toBeNull();
    expect(() => latencyPercentile({ buckets: [1], counts: [1] }, 0)).toThrow(RangeError);
    expect(() => latencyPercentile({ buckets: [1], counts: [1] }, 1.5)).toThrow(RangeError);
    expect(latencyPercentile(histogramOf([7]), 1)).toBe(7);
  });
});

/** A standard normal draw (Box–Muller). */
function gaussian(next: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}
