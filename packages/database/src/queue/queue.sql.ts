/**
 * The SQL every writer of the queue shares (ARCHITECTURE.md, "The queue"): a delivery that is
 * not finished has one row in `delivery_queue` beside its row in `deliveries`, and both are
 * written by the same statement, so neither is ever there without the other.
 */

/** What an `INSERT INTO deliveries` returns for enqueue() to read. */
export const ENQUEUED_COLUMNS = 'id, application_id, destination, next_attempt_at, status';

/**
 * The queue rows of the deliveries the CTE `inserted` has just inserted (RETURNING
 * ENQUEUED_COLUMNS): due at their first attempt, paused when they were made paused.
 */
export function enqueue(inserted: string): string {
  return `INSERT INTO delivery_queue (delivery_id, application_id, destination, due_at, paused)
          SELECT id, application_id, destination, next_attempt_at, status = 'paused' FROM ${inserted}`;
}

/**
 * True for a queue row `q` that a worker holds right now (its delivery reads as `sending`);
 * a lease that has run out is the claim's to take over. `now` is an SQL expression.
 */
export function leased(q: string, now: string): string {
  return `(${q}.lease_until IS NOT NULL AND ${q}.lease_until >= ${now})`;
}

/**
 * A statement that takes out of the queue the rows `dequeue` (a DELETE … RETURNING delivery_id)
 * removes, and ends their deliveries as cancelled at `now` (an SQL expression). Returns their ids.
 */
export function cancelDequeued(dequeue: string, now: string): string {
  return `WITH dequeued AS (${dequeue})
          UPDATE deliveries d SET status = 'cancelled', next_attempt_at = NULL, updated_at = ${now}
            FROM dequeued WHERE d.id = dequeued.delivery_id
          RETURNING d.id`;
}

/**
 * A delivery's status as the API shows it, for `d` (deliveries) LEFT JOINed to its queue row `q`:
 * a pending delivery whose queue row holds a live lease is `sending`.
 */
export function shownStatus(d: string, q: string): string {
  return `(CASE WHEN ${d}.status = 'pending' AND ${leased(q, 'now()')} THEN 'sending' ELSE ${d}.status::text END)`;
}
