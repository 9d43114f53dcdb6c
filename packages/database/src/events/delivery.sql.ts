import { DeliveryRecord } from '../records';
import { shownStatus } from '../queue/queue.sql';

/**
 * The columns of a DeliveryRecord, for `d` (deliveries); the SQL aliases make each row the record
 * itself. The status is the one the API shows (`sending` while a worker holds the delivery, read
 * from its queue row: queue.sql.ts, shownStatus), or the stored one.
 */
export function deliveryColumns(d: string, status: 'shown' | 'stored'): string {
  const columns: Record<keyof DeliveryRecord, string> = {
    id: `${d}.id`,
    eventId: `${d}.event_id`,
    eventType: `${d}.event_type`,
    status: status === 'stored' ? `${d}.status::text` : shownStatus(d),
    attemptCount: `${d}.attempt_count`,
    nextAttemptAt: `${d}.next_attempt_at`,
    createdAt: `${d}.created_at`,
  };
  return Object.entries(columns)
    .map(([key, sql]) => `${sql} AS "${key}"`)
    .join(', ');
}
