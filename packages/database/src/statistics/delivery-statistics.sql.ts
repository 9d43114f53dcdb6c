import { LATENCY_BUCKET_BOUNDS } from '@herald/core';

/**
 * Delivery statistics (PRODUCT.md §16) as the finish statement writes them: CTEs that follow the
 * finish's own, so counting an attempt costs no round trip and no statement of its own
 * (ARCHITECTURE.md, "Statistics").
 *
 * `finished` names the deliveries the batch moved on (its rows have id, application_id,
 * event_type, destination and attempt_count, the latter already counting this attempt), and
 * `input` the batch's attempts (delivery_id, status, finished_at, duration_ms, response_status,
 * error, manual_attempt). Reading `finished` counts only attempts whose worker still held the
 * lease: a lost lease counts nothing, as it records nothing. Only webhook deliveries count (the
 * operator's notices are not the application's traffic).
 *
 * Per (application, UTC hour of the finish, event type) the batch adds:
 * - `events`: deliveries whose first attempt this was;
 * - `succeeded`, `failed`: deliveries that ended with this attempt, unless it was a manual one
 *   (a retry or recover of a delivery that had ended already and was counted then): each delivery
 *   counts once;
 * - `attempts`, `failed_attempts`;
 * - the successful attempts' durations as a histogram (core's LATENCY_BUCKET_BOUNDS, bucket
 *   numbers as width_bucket gives them): ascending bucket numbers with their counts, only the
 *   buckets that have any;
 * - `errors`: the failed attempts by error kind, or by the answer's class (`4xx`, `5xx`, `3xx`).
 *
 * The batch's rows are aggregated first, then inserted in key order with one INSERT … ON CONFLICT
 * DO UPDATE that adds to a row already there (histograms bucket by bucket, errors kind by kind).
 * Two workers' finishes upserting the same rows lock them in the same order, so they wait for
 * each other but never deadlock.
 */
export function countDeliveryStatistics(finished: string, input: string): string {
  const bounds = `'{${LATENCY_BUCKET_BOUNDS.join(',')}}'::int[]`;
  const key = 'application_id, hour, event_type';
  return `statistics_attempts AS (
            SELECT f.application_id, date_trunc('hour', i.finished_at, 'UTC') AS hour, f.event_type,
                   f.attempt_count = 1 AS first_attempt, i.status, i.manual_attempt,
                   width_bucket(i.duration_ms, ${bounds}) AS latency_bucket,
                   CASE WHEN i.status <> 'succeeded'
                        THEN COALESCE(i.error, (i.response_status / 100)::text || 'xx', 'unknown') END AS error_kind
              FROM ${finished} f JOIN ${input} i ON i.delivery_id = f.id
             WHERE f.destination = 'webhook'
          ), statistics_latency AS (
            SELECT ${key}, array_agg(latency_bucket ORDER BY latency_bucket) AS buckets, array_agg(n ORDER BY latency_bucket) AS counts
              FROM (SELECT ${key}, latency_bucket, count(*)::int AS n FROM statistics_attempts
                     WHERE status = 'succeeded' GROUP BY ${key}, latency_bucket) by_bucket
             GROUP BY ${key}
          ), statistics_errors AS (
            SELECT ${key}, jsonb_object_agg(error_kind, n) AS errors
              FROM (SELECT ${key}, error_kind, count(*)::int AS n FROM statistics_attempts
                     WHERE error_kind IS NOT NULL GROUP BY ${key}, error_kind) by_kind
             GROUP BY ${key}
          ), statistics_counts AS (
            SELECT ${key},
                   count(*) FILTER (WHERE first_attempt) AS events,
                   count(*) FILTER (WHERE status = 'succeeded' AND NOT manual_attempt) AS succeeded,
                   count(*) FILTER (WHERE status = 'failed' AND NOT manual_attempt) AS failed,
                   count(*) AS attempts,
                   count(*) FILTER (WHERE status <> 'succeeded') AS failed_attempts
              FROM statistics_attempts
             GROUP BY ${key}
          ), statistics AS (
            INSERT INTO delivery_stats AS s (${key}, events, succeeded, failed, attempts, failed_attempts,
                                             latency_buckets, latency_counts, errors)
            SELECT ${key}, c.events, c.succeeded, c.failed, c.attempts, c.failed_attempts,
                   COALESCE(l.buckets, '{}'), COALESCE(l.counts, '{}'), COALESCE(e.errors, '{}')
              FROM statistics_counts c
              LEFT JOIN statistics_latency l USING (${key})
              LEFT JOIN statistics_errors e USING (${key})
             ORDER BY ${key}
            ON CONFLICT (${key}) DO UPDATE
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
          )`;
}
