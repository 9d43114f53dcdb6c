import { LATENCY_BUCKET_BOUNDS } from '@herald/core';

/**
 * Delivery statistics (PRODUCT.md §16) in two steps (ARCHITECTURE.md, "Statistics"):
 *
 * 1. The finish statement records its batch's attempts in one `delivery_stats_pending` row
 *    (recordPendingStatistics): one insert per batch, whatever the applications and event types
 *    in it, no row that another batch or worker also updates. Counting an attempt costs no round
 *    trip and no statement of its own, and it commits with the attempt or not at all.
 * 2. A worker folds the pending rows into `delivery_stats`, one row per application, UTC hour and
 *    event type (FOLD_PENDING_STATISTICS_SQL), every second: the rows of the current hour are
 *    updated once a second, not once per finish batch (which cost ten times as much per delivery:
 *    bench/README.md, "Issue 24: delivery statistics").
 *
 * Reads add what is pending to what is folded (PENDING_STATISTICS_ROWS), so they are exact at any
 * moment: a fold deletes the pending rows and adds them to `delivery_stats` in one statement.
 */

/** PostgreSQL's spelling of core's LATENCY_BUCKET_BOUNDS, for width_bucket. */
const LATENCY_BOUNDS_SQL = `'{${LATENCY_BUCKET_BOUNDS.join(',')}}'::int[]`;

/**
 * A CTE for the finish statement: the batch's webhook attempts as one pending row. `finished`
 * names the deliveries the batch moved on (id, application_id, event_type, destination and
 * attempt_count, already counting this attempt) and `input` its attempts (delivery_id, status,
 * finished_at, duration_ms, response_status, error, manual_attempt). Reading `finished` counts
 * only attempts whose worker still held the lease: a lost lease counts nothing, as it records
 * nothing. The operator's notices (destination `operational`) are not the application's traffic.
 *
 * Per attempt: its UTC hour and event type; whether it was its delivery's first (an event sent);
 * the outcome it counts as — `succeeded` or `failed` when it ended its delivery, unless it was a
 * manual one (a retry or recover of a delivery that had ended and was counted then: a delivery
 * counts once); a successful attempt's latency bucket (core's latency histogram); a failed one's
 * error kind, or its answer's class (`3xx`, `4xx`, `5xx`).
 */
export function recordPendingStatistics(finished: string, input: string): string {
  return `statistics_pending AS (
            INSERT INTO delivery_stats_pending (application_ids, hours, event_types, first_attempts, outcomes, latency_buckets, error_kinds)
            SELECT array_agg(f.application_id), array_agg(date_trunc('hour', i.finished_at, 'UTC')), array_agg(f.event_type),
                   array_agg(f.attempt_count = 1),
                   array_agg(CASE WHEN i.status <> 'pending' AND NOT i.manual_attempt THEN i.status END),
                   array_agg(CASE WHEN i.status = 'succeeded' THEN width_bucket(i.duration_ms, ${LATENCY_BOUNDS_SQL}) END),
                   array_agg(CASE WHEN i.status <> 'succeeded'
                                  THEN COALESCE(i.error, (i.response_status / 100)::text || 'xx', 'unknown') END)
              FROM ${finished} f JOIN ${input} i ON i.delivery_id = f.id
             WHERE f.destination = 'webhook'
            HAVING count(*) > 0
          )`;
}

/** The pending rows' attempts, one row each: application_id, hour, event_type, first_attempt, outcome, latency_bucket, error_kind. */
function pendingAttempts(where = ''): string {
  return `SELECT a.* FROM delivery_stats_pending p,
                 unnest(p.application_ids, p.hours, p.event_types, p.first_attempts, p.outcomes, p.latency_buckets, p.error_kinds)
                   AS a(application_id, hour, event_type, first_attempt, outcome, latency_bucket, error_kind)
           ${where}`;
}

/**
 * What is pending for application $1 in [$2, $3), in the shape of `delivery_stats` rows (one per
 * attempt), for a read to add to the folded rows.
 */
export const PENDING_STATISTICS_ROWS = `
  SELECT application_id, hour, event_type, first_attempt::int AS events,
         (outcome IS NOT DISTINCT FROM 'succeeded')::int AS succeeded, (outcome IS NOT DISTINCT FROM 'failed')::int AS failed,
         1 AS attempts, (error_kind IS NOT NULL)::int AS failed_attempts,
         CASE WHEN latency_bucket IS NULL THEN '{}'::int[] ELSE ARRAY[latency_bucket] END AS latency_buckets,
         CASE WHEN latency_bucket IS NULL THEN '{}'::int[] ELSE ARRAY[1] END AS latency_counts,
         CASE WHEN error_kind IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(error_kind, 1) END AS errors
    FROM (${pendingAttempts('WHERE a.application_id = $1 AND a.hour >= $2 AND a.hour < $3')}) pending`;

/** The advisory lock a fold holds (till its statement ends), so folds take turns across workers. */
const FOLD_LOCK_KEY = 72_707_369_016;

const KEY = 'application_id, hour, event_type';

/**
 * Folds at most $1 pending rows, oldest first, into `delivery_stats` and deletes them, in one
 * statement; when another fold holds the lock, nothing. Per key the attempts are aggregated, then
 * one INSERT … ON CONFLICT DO UPDATE in key order adds counts, histograms bucket by bucket and
 * errors kind by kind. Answers how many pending rows and attempts it folded.
 */
export const FOLD_PENDING_STATISTICS_SQL = `
  WITH lock AS (
    SELECT pg_try_advisory_xact_lock(${FOLD_LOCK_KEY}) AS held
  ), taken AS (
    DELETE FROM delivery_stats_pending p
     WHERE (SELECT held FROM lock)
       AND p.id IN (SELECT id FROM delivery_stats_pending ORDER BY id LIMIT $1)
    RETURNING p.*
  ), attempts AS (
    SELECT a.* FROM taken p,
           unnest(p.application_ids, p.hours, p.event_types, p.first_attempts, p.outcomes, p.latency_buckets, p.error_kinds)
             AS a(application_id, hour, event_type, first_attempt, outcome, latency_bucket, error_kind)
  ), latency AS (
    SELECT ${KEY}, array_agg(latency_bucket ORDER BY latency_bucket) AS buckets, array_agg(n ORDER BY latency_bucket) AS counts
      FROM (SELECT ${KEY}, latency_bucket, count(*)::int AS n FROM attempts
             WHERE latency_bucket IS NOT NULL GROUP BY ${KEY}, latency_bucket) by_bucket
     GROUP BY ${KEY}
  ), errors AS (
    SELECT ${KEY}, jsonb_object_agg(error_kind, n) AS errors
      FROM (SELECT ${KEY}, error_kind, count(*)::int AS n FROM attempts
             WHERE error_kind IS NOT NULL GROUP BY ${KEY}, error_kind) by_kind
     GROUP BY ${KEY}
  ), counts AS (
    SELECT ${KEY},
           count(*) FILTER (WHERE first_attempt) AS events,
           count(*) FILTER (WHERE outcome = 'succeeded') AS succeeded,
           count(*) FILTER (WHERE outcome = 'failed') AS failed,
           count(*) AS attempts,
           count(*) FILTER (WHERE error_kind IS NOT NULL) AS failed_attempts
      FROM attempts
     GROUP BY ${KEY}
  ), folded AS (
    INSERT INTO delivery_stats AS s (${KEY}, events, succeeded, failed, attempts, failed_attempts, latency_buckets, latency_counts, errors)
    SELECT ${KEY}, c.events, c.succeeded, c.failed, c.attempts, c.failed_attempts,
           COALESCE(l.buckets, '{}'), COALESCE(l.counts, '{}'), COALESCE(e.errors, '{}')
      FROM counts c
      LEFT JOIN latency l USING (${KEY})
      LEFT JOIN errors e USING (${KEY})
     ORDER BY ${KEY}
    ON CONFLICT (${KEY}) DO UPDATE
       SET events = s.events + excluded.events,
           succeeded = s.succeeded + excluded.succeeded,
           failed = s.failed + excluded.failed,
           attempts = s.attempts + excluded.attempts,
           failed_attempts = s.failed_attempts + excluded.failed_attempts,
           (latency_buckets, latency_counts) = (
             SELECT COALESCE(array_agg(bucket ORDER BY bucket), '{}'), COALESCE(array_agg(n ORDER BY bucket), '{}')
               FROM (SELECT bucket, sum(n)::int AS n
                       FROM (SELECT * FROM unnest(s.latency_buckets, s.latency_counts)
                             UNION ALL SELECT * FROM unnest(excluded.latency_buckets, excluded.latency_counts)) AS both_(bucket, n)
                      GROUP BY bucket) merged),
           errors = CASE WHEN excluded.errors = '{}' THEN s.errors ELSE (
             SELECT jsonb_object_agg(kind, n)
               FROM (SELECT kind, sum(n::int) AS n
                       FROM (SELECT * FROM jsonb_each_text(s.errors) UNION ALL SELECT * FROM jsonb_each_text(excluded.errors)) AS both_(kind, n)
                      GROUP BY kind) merged) END
    RETURNING 1
  )
  SELECT (SELECT held FROM lock) AS held, (SELECT count(*) FROM taken)::int AS pending_rows,
         (SELECT count(*) FROM attempts)::int AS attempts, (SELECT count(*) FROM folded)::int AS keys`;
