/**
 * Which buckets a statistics read covers (PRODUCT.md §16, `GET /application/{id}/stats`).
 * Statistics are kept per UTC hour, so a bucket is a whole UTC hour or day, and a read lists every
 * bucket that overlaps [since, until), whole, oldest first (the first and last may reach outside
 * the window: an hour cannot be split).
 */

export const STATISTICS_GRANULARITIES = ['hour', 'day'] as const;
export type StatisticsGranularity = (typeof STATISTICS_GRANULARITIES)[number];

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** Without `since`, a read covers this much before `until` (the last 24 hours, by hour unless asked otherwise). */
export const DEFAULT_STATISTICS_SPAN_MS = DAY_MS;
/** At most this far from `since` to `until`. */
export const MAX_STATISTICS_SPAN_MS = 90 * DAY_MS;
/** At most this many buckets in one answer (90 days by hour). */
export const MAX_STATISTICS_BUCKETS = 2_160;
/** How long statistics are kept: retention removes the hours older than this. */
export const STATISTICS_RETENTION_DAYS = 400;

export const GRANULARITY_MS: Readonly<Record<StatisticsGranularity, number>> = { hour: HOUR_MS, day: DAY_MS };

export interface StatisticsWindow {
  granularity: StatisticsGranularity;
  /** The first bucket's start (since, rounded down to the granularity in UTC). */
  from: Date;
  /** The end of the last bucket, exclusive (until, rounded up). */
  to: Date;
  /** Each bucket's start, oldest first. */
  bucketStarts: Date[];
}

export type StatisticsWindowResult =
  { ok: true; window: StatisticsWindow } | { ok: false; parameter: 'since' | 'until' | 'granularity'; message: string };

/**
 * The buckets of a read, or which parameter is wrong and why: `until` (default `now`) must be
 * later than `since` (default `until` − 24 h), at most 90 days later, and the window must span at
 * most 2,160 buckets (an unaligned 90 days by hour spans 2,161).
 */
export function statisticsWindow(
  query: { since?: Date; until?: Date; granularity?: StatisticsGranularity },
  now: Date,
): StatisticsWindowResult {
  const granularity = query.granularity ?? 'hour';
  const until = query.until ?? now;
  const since = query.since ?? new Date(until.getTime() - DEFAULT_STATISTICS_SPAN_MS);
  if (until.getTime() <= since.getTime()) {
    const parameter = query.until === undefined ? 'since' : 'until';
    return {
      ok: false,
      parameter,
      message:
        parameter === 'until'
          ? `until (${until.toISOString()}) must be later than since (${since.toISOString()}).`
          : `since (${since.toISOString()}) must be earlier than until, which is now (${until.toISOString()}) when not given.`,
    };
  }
  const span = until.getTime() - since.getTime();
  if (span > MAX_STATISTICS_SPAN_MS) {
    return {
      ok: false,
      parameter: 'since',
      message: `since and until may be at most 90 days apart; these are ${formatDays(span)} days apart.`,
    };
  }
  const size = GRANULARITY_MS[granularity];
  const from = Math.floor(since.getTime() / size) * size;
  const to = Math.ceil(until.getTime() / size) * size;
  const count = (to - from) / size;
  if (count > MAX_STATISTICS_BUCKETS) {
    return {
      ok: false,
      parameter: 'granularity',
      message: `granularity=${granularity} from since to until makes ${count} buckets, at most ${MAX_STATISTICS_BUCKETS}: start and end the window on the hour, or ask for granularity=day.`,
    };
  }
  const bucketStarts = Array.from({ length: count }, (_, i) => new Date(from + i * size));
  return { ok: true, window: { granularity, from: new Date(from), to: new Date(to), bucketStarts } };
}

function formatDays(ms: number): string {
  return (Math.round((ms / DAY_MS) * 10) / 10).toString();
}
