/**
 * The latency histogram of delivery statistics (PRODUCT.md §16: percentiles of successful
 * attempts' durations within ±5%). Durations are whole milliseconds. Bucket k (1-based, as
 * PostgreSQL's `width_bucket(duration, LATENCY_BUCKET_BOUNDS)` numbers them) holds the durations
 * from LATENCY_BUCKET_BOUNDS[k-1] up to the next bound, exclusive; the last one everything above.
 *
 * Every bucket's largest duration is at most 1.1 times its smallest (each bound is the one before
 * times 1.1, rounded down, or one more while that is the same number), so one number stands for a
 * whole bucket within 4.8% of any duration in it (latencyOfBucket): the exact percentile is a
 * duration of the bucket the counts point to. The statistics table stores bucket numbers, so these
 * bounds must never change.
 */

function bucketBounds(largest: number): number[] {
  const bounds = [0, 1];
  while (bounds[bounds.length - 1] < largest) {
    const last = bounds[bounds.length - 1];
    bounds.push(Math.max(last + 1, Math.floor((last * 11) / 10)));
  }
  return bounds;
}

/**
 * The lower bound of each bucket, in ms, from 0 to past 300 s, the longest attempt
 * HERALD_DELIVERY_TIMEOUT_SECONDS allows (126 bounds: 0, 1, 2, … 20, 22, 24, … 324,057, 356,462).
 */
export const LATENCY_BUCKET_BOUNDS: readonly number[] = Object.freeze(bucketBounds(330_000));

/** The bucket (1 … LATENCY_BUCKET_BOUNDS.length) of a duration in ms, as `width_bucket` numbers it. */
export function latencyBucketOf(durationMs: number): number {
  const duration = Math.max(0, Math.floor(durationMs));
  // The number of bounds at or below the duration: a binary search for the last one.
  let low = 0;
  let high = LATENCY_BUCKET_BOUNDS.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (LATENCY_BUCKET_BOUNDS[middle] <= duration) low = middle;
    else high = middle - 1;
  }
  return low + 1;
}

/**
 * The duration that stands for bucket `bucket`: for its smallest duration m and largest M, the
 * whole number nearest 2mM / (m + M), which is off by at most (M − m) / (M + m) of any duration
 * in it, under 5%. The last bucket has no largest duration and stands for its bound.
 */
export function latencyOfBucket(bucket: number): number {
  const smallest = LATENCY_BUCKET_BOUNDS[bucket - 1];
  if (smallest === undefined) throw new RangeError(`no latency bucket ${bucket}`);
  const next = LATENCY_BUCKET_BOUNDS[bucket];
  if (next === undefined) return smallest;
  const largest = next - 1;
  return smallest === largest ? smallest : Math.round((2 * smallest * largest) / (smallest + largest));
}

/** A histogram as stored: bucket numbers, ascending, and how many durations fell in each. */
export interface LatencyHistogram {
  buckets: readonly number[];
  counts: readonly number[];
}

/**
 * The `quantile` (0 < quantile ≤ 1) of the durations a histogram counts, by nearest rank: the
 * duration at rank ⌈quantile · n⌉ of them in ascending order, as the bucket holding it stands for
 * it (latencyOfBucket). Null when it counts none.
 */
export function latencyPercentile(histogram: LatencyHistogram, quantile: number): number | null {
  if (!(quantile > 0 && quantile <= 1)) throw new RangeError(`quantile must be in (0, 1], got ${quantile}`);
  const total = histogram.counts.reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  const rank = Math.ceil(quantile * total);
  let seen = 0;
  for (let i = 0; i < histogram.buckets.length; i++) {
    seen += histogram.counts[i];
    if (seen >= rank) return latencyOfBucket(histogram.buckets[i]);
  }
  return latencyOfBucket(histogram.buckets[histogram.buckets.length - 1]);
}
