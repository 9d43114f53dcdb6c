import { DeliveryRecord } from '../records';
import { sqlColumnsOf } from '../table-columns';

/** The columns of a DeliveryRecord; the SQL aliases make each row the record itself. */
const DELIVERY_COLUMNS = {
  id: 'id',
  eventId: 'event_id',
  eventType: 'event_type',
  status: 'status',
  attemptCount: 'attempt_count',
  nextAttemptAt: 'next_attempt_at',
  createdAt: 'created_at',
} as const satisfies Record<keyof DeliveryRecord, string>;

/** `table` is how the statement names the deliveries table. */
export function deliveryColumns(table: string): string {
  return sqlColumnsOf(DELIVERY_COLUMNS, table);
}
