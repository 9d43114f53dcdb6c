import type { Schemas } from '@herald/client';

export type Statistics = Schemas['StatisticsDto'];
export type StatisticsBucket = Schemas['StatisticsBucketDto'];
export type Granularity = 'hour' | 'day';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * The ranges the Statistics tab offers (PRODUCT.md §16: "a range selector"). A day is drawn by
 * hour and so is a week (168 bars: its daily rhythm stays visible); a month and a quarter by day.
 */
export const STATISTICS_RANGES = {
  '24h': { label: '24 h', words: 'the last 24 hours', granularity: 'hour', buckets: 24 },
  '7d': { label: '7 d', words: 'the last 7 days', granularity: 'hour', buckets: 7 * 24 },
  '30d': { label: '30 d', words: 'the last 30 days', granularity: 'day', buckets: 30 },
  '90d': { label: '90 d', words: 'the last 90 days', granularity: 'day', buckets: 90 },
} as const satisfies Record<string, { label: string; words: string; granularity: Granularity; buckets: number }>;

export type StatisticsRange = keyof typeof STATISTICS_RANGES;

export function isStatisticsRange(value: string | null): value is StatisticsRange {
  return value !== null && Object.hasOwn(STATISTICS_RANGES, value);
}

/**
 * The query for a range: `since` at the start of the bucket `buckets − 1` before the current one
 * (UTC hours, UTC days), no `until` (now): exactly `buckets` bars, the last one the bucket in progress.
 */
export function statisticsQuery(range: StatisticsRange, now: number = Date.now()): { since: string; granularity: Granularity } {
  const { granularity, buckets } = STATISTICS_RANGES[range];
  const size = granularity === 'hour' ? HOUR_MS : DAY_MS;
  const current = Math.floor(now / size) * size;
  return { since: new Date(current - (buckets - 1) * size).toISOString(), granularity };
}

export interface StatisticsTotals {
  events: number;
  succeeded: number;
  failed: number;
  attempts: number;
  failedAttempts: number;
  /** Succeeded of the deliveries that ended, 0…1; null when none ended. */
  successRate: number | null;
  /** Failed attempts by reason over the range, most frequent first. */
  errors: [string, number][];
  /** The highest p95 of any bucket and that bucket's start; null without successful attempts. */
  slowest: { p95: number; start: string } | null;
}

export function totalsOf(buckets: StatisticsBucket[]): StatisticsTotals {
  const errors = new Map<string, number>();
  const totals = { events: 0, succeeded: 0, failed: 0, attempts: 0, failedAttempts: 0 };
  let slowest: StatisticsTotals['slowest'] = null;
  for (const bucket of buckets) {
    totals.events += bucket.events;
    totals.succeeded += bucket.succeeded;
    totals.failed += bucket.failed;
    totals.attempts += bucket.attempts;
    totals.failedAttempts += bucket.failed_attempts;
    for (const [kind, n] of Object.entries(bucket.errors)) errors.set(kind, (errors.get(kind) ?? 0) + n);
    const p95 = bucket.latency_ms.p95;
    if (p95 !== null && (slowest === null || p95 > slowest.p95)) slowest = { p95, start: bucket.start };
  }
  const ended = totals.succeeded + totals.failed;
  return {
    ...totals,
    successRate: ended === 0 ? null : totals.succeeded / ended,
    errors: [...errors].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
    slowest,
  };
}

/**
 * An axis from 0 to a round number at or above `max`, with its ticks: steps of 1, 2 or 5 times a
 * power of ten, about `ticks` of them. An empty chart still gets an axis (0 … 1).
 */
export function niceScale(max: number, ticks = 4): { top: number; ticks: number[] } {
  if (!(max > 0)) return { top: 1, ticks: [0, 1] };
  const rough = max / ticks;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= rough) ?? 10 * power;
  // Whole steps only: counts and milliseconds have no fractions worth an axis line.
  const wholeStep = Math.max(1, step);
  const top = Math.ceil(max / wholeStep) * wholeStep;
  return { top, ticks: Array.from({ length: Math.round(top / wholeStep) + 1 }, (_, i) => i * wholeStep) };
}

/** How an error kind or answer class reads in the console. */
export function reasonWords(kind: string): string {
  const words: Record<string, string> = {
    '3xx': 'Redirect (3xx)',
    '4xx': 'Refused (4xx)',
    '5xx': 'Server error (5xx)',
    dns_error: 'DNS lookup failed',
    connection_refused: 'Connection refused',
    connect_timeout: 'Connect timeout',
    tls_error: 'TLS error',
    destination_blocked: 'Destination blocked',
    timeout: 'Timed out',
    network_error: 'Network error',
  };
  return Object.hasOwn(words, kind) ? words[kind] : kind;
}

/** Milliseconds as a person reads a latency: "84 ms", "1.2 s". */
export function formatMs(ms: number | null): string {
  if (ms === null) return '–';
  return ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

export function formatCount(n: number): string {
  return new Intl.NumberFormat(undefined).format(n);
}

/**
 * A bucket's start as its axis label and its full name: hours in the reader's own time ("14:00",
 * and the day at midnight), days as the UTC date they are ("25 Nov").
 */
export function bucketLabel(start: string, granularity: Granularity, locale?: string): { short: string; long: string } {
  const at = new Date(start);
  if (granularity === 'day') {
    const date = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(at);
    return { short: date, long: `${new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(at)} (UTC day)` };
  }
  const time = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit' }).format(at);
  const midnight = at.getHours() === 0 && at.getMinutes() === 0;
  return {
    short: midnight ? new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short' }).format(at) : time,
    long: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(at),
  };
}
