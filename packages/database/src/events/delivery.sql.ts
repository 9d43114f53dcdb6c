import { DeliveryRecord } from '../records';
import { shownStatus } from '../queue/queue.sql';

/**
 * The columns of a DeliveryRecord, for `d` (deliveries) LEFT JOINed to its queue row `q`; the
 * SQL aliases make each row the record itself. The status is the one the API shows (`sending`
 * while a worker holds the delivery: queue.sql.ts); without `q`, the stored one.
 */
export function deliveryColumns(d: string, q: string | null): string {
  const columns: Record<keyof DeliveryRecord, string> = {
    id: `${d}.id`,
    eventId: `${d}.event_id`,
    eventType: `${d}.event_type`,
    status: q === null ? `${d}.status::text` : shownStatus(d, q),
    attemptCount: `${d}.attempt_count`,
    nextAttemptAt: `${d}.next_attempt_at`,
    createdAt: `${d}.created_at`,
  };
  return Object.entries(columns)
    .map(([key, sql]) => `${sql} AS "${key}"`)
    .join(', ');
}

/** Joins the queue row `q` of the delivery `d` (deliveryColumns reads it). */
export function queueJoin(d: string, q: string): string {
  return `LEFT JOIN delivery_queue ${q} ON ${q}.delivery_id = ${d}.id`;
}
