import type { DeliveryStatus } from '@herald/core';
import { sql } from './sql';

/**
 * Puts deliveries into `status` the way Herald itself would leave them, for tests that start
 * from a given state instead of driving a worker there: a finished delivery (succeeded, failed,
 * cancelled) is out of the queue; a pending or paused one has its queue row; `sending` is a
 * pending one whose queue row a worker (`lease_token` 'test-lease') holds for an hour. `set`
 * adds column assignments of `deliveries` (e.g. "attempt_count = 6", "created_at = $3"), with
 * `params` from $3 on.
 */
export async function setDeliveryStatus(
  databaseUrl: string,
  ids: string | readonly string[],
  status: DeliveryStatus,
  set: string[] = [],
  params: unknown[] = [],
): Promise<void> {
  const stored = status === 'sending' ? 'pending' : status;
  await sql(
    databaseUrl,
    `WITH d AS (
       UPDATE deliveries SET ${['status = $2::delivery_status', ...set].join(', ')}
        WHERE id = ANY($1::text[])
       RETURNING id, application_id, destination, created_at, status
     ), finished AS (
       DELETE FROM delivery_queue q USING d WHERE q.delivery_id = d.id AND d.status IN ('succeeded', 'failed', 'cancelled')
     )
     INSERT INTO delivery_queue (delivery_id, application_id, destination, due_at, paused, lease_token, lease_until)
     SELECT id, application_id, destination, created_at, status = 'paused',
            ${status === 'sending' ? `'test-lease', now() + interval '1 hour'` : 'NULL, NULL'}
       FROM d WHERE d.status IN ('pending', 'paused')
     ON CONFLICT (delivery_id) DO UPDATE
       SET paused = excluded.paused, lease_token = excluded.lease_token, lease_until = excluded.lease_until`,
    [typeof ids === 'string' ? [ids] : ids, stored, ...params],
  );
}
