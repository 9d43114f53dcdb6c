import type { LatencyHistogram, StatisticsGranularity } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { PgPool } from '../pg-pool';
import { ApplicationScope } from '../records';
import { PENDING_STATISTICS_ROWS } from './delivery-statistics.sql';

/** One bucket of an application's statistics, summed over its hours and event types. */
export interface StatisticsBucketRecord {
  /** The bucket's start: a UTC hour or day. */
  start: Date;
  events: number;
  succeeded: number;
  failed: number;
  attempts: number;
  failedAttempts: number;
  /** Successful attempts' durations (bucket numbers ascending, as core's latency histogram reads them). */
  latency: LatencyHistogram;
  /** Failed attempts by error kind or answer class. */
  errors: Record<string, number>;
}

export interface StatisticsRecord {
  /** Only the buckets that have statistics, oldest first. */
  buckets: StatisticsBucketRecord[];
  /** Deliveries that ended in the window, by event type. */
  byEvent: Record<string, { succeeded: number; failed: number }>;
}

/** A read's range: buckets of `granularity` from `from` (a bucket's start) to `to` (exclusive). */
export interface StatisticsRange {
  from: Date;
  to: Date;
  granularity: StatisticsGranularity;
}

interface BucketRow {
  start: Date;
  events: string;
  succeeded: string;
  failed: string;
  attempts: string;
  failed_attempts: string;
  latency_buckets: number[] | null;
  latency_counts: string[] | null;
  errors: Record<string, number> | null;
}

/**
 * The application's statistics in [$2, $3) ($1 the application): its folded hours (one range of
 * the primary key (application_id, hour, …)) and what is still pending, as rows alike. A fold
 * moves attempts from one to the other in one statement, so a read's snapshot has each once.
 */
const ROWS_IN_RANGE = `
  SELECT s.application_id, s.hour, s.event_type, s.events, s.succeeded, s.failed, s.attempts, s.failed_attempts,
         s.latency_buckets, s.latency_counts, s.errors
    FROM delivery_stats s
   WHERE s.application_id = $1 AND s.hour >= $2 AND s.hour < $3
  UNION ALL
  ${PENDING_STATISTICS_ROWS}`;

/**
 * The rows in the range summed per bucket ($4 `hour` or `day`, in UTC): counts, the latency
 * histograms bucket by bucket, the errors kind by kind.
 */
const BUCKETS_SQL = `
  WITH hours AS (
    SELECT date_trunc($4::text, r.hour, 'UTC') AS start, r.* FROM (${ROWS_IN_RANGE}) r
  ), totals AS (
    SELECT start, sum(events)::bigint AS events, sum(succeeded)::bigint AS succeeded, sum(failed)::bigint AS failed,
           sum(attempts)::bigint AS attempts, sum(failed_attempts)::bigint AS failed_attempts
      FROM hours GROUP BY start
  ), latency AS (
    SELECT start, array_agg(bucket ORDER BY bucket) AS latency_buckets, array_agg(n ORDER BY bucket) AS latency_counts
      FROM (SELECT h.start, l.bucket, sum(l.n)::bigint AS n
              FROM hours h, unnest(h.latency_buckets, h.latency_counts) AS l(bucket, n)
             GROUP BY h.start, l.bucket) by_bucket
     GROUP BY start
  ), errors AS (
    SELECT start, jsonb_object_agg(kind, n) AS errors
      FROM (SELECT h.start, e.key AS kind, sum(e.value::bigint) AS n
              FROM hours h, jsonb_each_text(h.errors) AS e
             GROUP BY h.start, e.key) by_kind
     GROUP BY start
  )
  SELECT t.start, t.events, t.succeeded, t.failed, t.attempts, t.failed_attempts, l.latency_buckets, l.latency_counts, e.errors
    FROM totals t
    LEFT JOIN latency l USING (start)
    LEFT JOIN errors e USING (start)
   ORDER BY t.start`;

/** Deliveries that ended in the range, per event type ($1 application, $2 from, $3 to). */
const BY_EVENT_SQL = `
  SELECT event_type, sum(succeeded)::bigint AS succeeded, sum(failed)::bigint AS failed
    FROM (${ROWS_IN_RANGE}) r
   GROUP BY event_type
   ORDER BY event_type`;

/**
 * The read side of delivery statistics (PRODUCT.md §16). The worker's finish statement records
 * them and its folds sum them up (statistics/delivery-statistics.sql.ts); retention removes them
 * (housekeeping/).
 */
@Injectable()
export class StatisticsRepository {
  constructor(private readonly pg: PgPool) {}

  async read(scope: ApplicationScope, range: StatisticsRange): Promise<StatisticsRecord> {
    const values = [scope.applicationId, range.from, range.to];
    const [buckets, byEvent] = await Promise.all([
      this.pg.sql<BucketRow>(BUCKETS_SQL, [...values, range.granularity]),
      this.pg.sql<{ event_type: string; succeeded: string; failed: string }>(BY_EVENT_SQL, values),
    ]);
    return {
      buckets: buckets.map((row) => ({
        start: row.start,
        events: Number(row.events),
        succeeded: Number(row.succeeded),
        failed: Number(row.failed),
        attempts: Number(row.attempts),
        failedAttempts: Number(row.failed_attempts),
        latency: { buckets: row.latency_buckets ?? [], counts: (row.latency_counts ?? []).map(Number) },
        errors: Object.fromEntries(Object.entries(row.errors ?? {}).map(([kind, n]) => [kind, Number(n)])),
      })),
      // An own property for every name, `__proto__` too (event type names may be any of [a-z0-9_.]).
      byEvent: Object.fromEntries(byEvent.map((row) => [row.event_type, { succeeded: Number(row.succeeded), failed: Number(row.failed) }])),
    };
  }
}
