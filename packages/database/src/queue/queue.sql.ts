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
 * The predicate of delivery_queue_ready_idx, for the queue row `q`: the entries the claim's walk
 * reads. The others (paused, blocked behind their key's head, the operator's) are in
 * delivery_queue_parked_idx; a statement over all of an application's entries names both arms,
 * `(ready(q) OR …)`, so PostgreSQL reads it as a BitmapOr of the two indexes.
 */
export function ready(q: string): string {
  return `(NOT ${q}.paused AND NOT ${q}.blocked AND ${q}.destination = 'webhook')`;
}

/**
 * Ordering keys (PRODUCT.md §13). A key's deliveries are in the queue in the order of
 * `sequence`; all but the first (its head) are `blocked`, out of the claim's due index. Whoever
 * takes a key's head out of the queue (a finish, a cancel, a manual retry that lets it go first)
 * unblocks the next in the same statement (unblockNext). Two transactions that do not see each
 * other's rows (a publish adding to a key while a finish removes its head) would leave a row
 * blocked behind nothing, so every statement that adds keyed rows or takes them out runs, in
 * its transaction, after ORDERING_LOCK_SQL has taken the application's lock: one at a time per
 * application, and each sees what the one before committed. Statements without keyed rows never
 * take it.
 */
const ORDERING_LOCK_SPACE = 1_330_202;

/** Takes the ordering lock (till commit) of the applications $1 (int[]), in ascending order, so two never deadlock. */
export const ORDERING_LOCK_SQL = `
  SELECT count(pg_advisory_xact_lock(${ORDERING_LOCK_SPACE}, application_id))::int AS locked
    FROM (SELECT DISTINCT unnest($1::int[]) AS application_id ORDER BY 1) applications`;

/**
 * CTEs (to follow a CTE `removed` whose rows, delivery_id, application_id and ordering_key, have
 * just left their key's order) that unblock, for each of those keys, the first delivery left in
 * it: one probe of delivery_queue_ordering_idx per key. When the row removed was not the head,
 * the first left is the head, already unblocked, and nothing changes.
 */
export function unblockNext(removed: string): string {
  return `next_heads AS (
            SELECT h.delivery_id
              FROM (SELECT DISTINCT application_id, ordering_key FROM ${removed} WHERE ordering_key IS NOT NULL) k
              CROSS JOIN LATERAL (
                SELECT n.delivery_id FROM delivery_queue n
                 WHERE n.application_id = k.application_id AND n.ordering_key = k.ordering_key
                   AND n.delivery_id NOT IN (SELECT delivery_id FROM ${removed})
                 ORDER BY n.sequence LIMIT 1) h
          ), unblocked AS (
            UPDATE delivery_queue q SET blocked = false FROM next_heads h WHERE q.delivery_id = h.delivery_id AND q.blocked
            RETURNING q.delivery_id
          )`;
}

/**
 * A statement that takes out of the queue the rows `dequeue` (a DELETE … RETURNING
 * delivery_id, application_id, ordering_key) removes, unblocks what waited behind them in their
 * keys, and ends their deliveries as cancelled at `now` (an SQL expression). Returns their ids.
 * When keyed rows may be among them, run it after ORDERING_LOCK_SQL.
 */
export function cancelDequeued(dequeue: string, now: string): string {
  return `WITH dequeued AS (${dequeue}), ${unblockNext('dequeued')}
          UPDATE deliveries d SET status = 'cancelled', next_attempt_at = NULL, updated_at = ${now}
            FROM dequeued WHERE d.application_id = dequeued.application_id AND d.id = dequeued.delivery_id
          RETURNING d.id`;
}

/** What a DELETE FROM delivery_queue returns for cancelDequeued and unblockNext to read. */
export const DEQUEUED_COLUMNS = 'delivery_id, application_id, ordering_key';

/**
 * A delivery's status as the API shows it, for `d` (deliveries) LEFT JOINed to its queue row `q`:
 * a pending delivery whose queue row holds a live lease is `sending`.
 */
export function shownStatus(d: string, q: string): string {
  return `(CASE WHEN ${d}.status = 'pending' AND ${leased(q, 'now()')} THEN 'sending' ELSE ${d}.status::text END)`;
}

/**
 * Caps across workers (PRODUCT.md §17). One claim at a time per application: a claim serves an
 * application only once it holds this transaction-level advisory lock, and passes over one whose
 * lock another worker's claim holds (pg_try_: it never waits, so claims never queue on each
 * other). Under it, the attempts already in flight to the endpoint are counted and the claim
 * takes no more than the room left. Advisory locks write nothing, unlike a row lock.
 */
const CLAIM_LOCK_SPACE = 1_330_203;

/** True once this transaction holds `applicationId`'s claim lock (an SQL expression); false when another claim holds it. */
export function tryClaimLock(applicationId: string): string {
  return `pg_try_advisory_xact_lock(${CLAIM_LOCK_SPACE}, ${applicationId})`;
}

/**
 * The leases of endpoint_claims rows `c` still in flight at `now` (an SQL expression): the
 * deliveries the claim recorded whose queue entry still holds its lease. A delivery that finished
 * left the queue; one handed back or rescheduled lost its lease; one whose worker died has a lease
 * that ran out, and whoever claims it next records it under its own token. A row whose lease ran
 * out as a whole is read no further.
 */
export function liveLeases(c: string, now: string): string {
  return `(CASE WHEN ${c}.lease_until < ${now} THEN 0 ELSE
             (SELECT count(*) FROM delivery_queue l
               WHERE l.delivery_id = ANY (${c}.delivery_ids) AND l.lease_token = ${c}.lease_token AND l.lease_until >= ${now}) END)`;
}

/**
 * Attempts in flight per application and holder at `now`, from `claims` (rows of endpoint_claims
 * with a `live` column, liveLeases): a worker holding slots (the main claim's rows) counts the
 * least of the slots its latest claim holds (each claim's row says how many the worker holds
 * from then on; older rows lend none) and its live leases, since it runs no more attempts at once
 * than either; rows without a holder (the throttle's) count their live leases. A holder's count
 * only falls between its claims (its leases end), and each claim sets its slots to no more than
 * the cap leaves beside the others' counts, under the application's claim lock: so the cap holds.
 * A holder's latest row is kept while its lease lasts (claims delete only the others with
 * nothing in flight, DeliveryQueueRepository's CLAIM_SQL), so the slots counted are the ones the
 * worker uses. Yields (application_id, holder, counted).
 */
export function endpointInFlight(claims: string, now: string): string {
  return `SELECT application_id, holder,
                 CASE WHEN holder IS NULL THEN sum(live)
                      ELSE LEAST((array_agg(slots ORDER BY lease_until DESC, lease_token DESC) FILTER (WHERE lease_until >= ${now}))[1],
                                 sum(live)) END AS counted
            FROM ${claims} GROUP BY application_id, holder`;
}

/**
 * Whether the row `c` of `claims` (as for endpointInFlight) is a worker's latest claim of its
 * application, with its lease still running: the slots it holds are the worker's, even while it
 * has nothing in flight.
 */
export function latestOfHolder(c: string, claims: string, now: string): string {
  return `(${c}.holder IS NOT NULL AND ${c}.lease_until >= ${now} AND NOT EXISTS (
             SELECT 1 FROM ${claims} n WHERE n.application_id = ${c}.application_id AND n.holder = ${c}.holder
                AND (n.lease_until, n.lease_token) > (${c}.lease_until, ${c}.lease_token)))`;
}

/**
 * An INSERT recording, per application, the deliveries `leases` (delivery_id, application_id)
 * leased with `token` until `until`. A token claims an application once per statement; the
 * throttle's statement may add to its main claim's row. With `slots` (an SQL expression of the
 * row's application_id, over `leases` joined as `l`), the row is `holder`'s and holds that many.
 */
export function recordClaims(leases: string, token: string, until: string, held?: { holder: string; slots: string }): string {
  return `INSERT INTO endpoint_claims AS c (application_id, lease_token, lease_until, delivery_ids, holder, slots)
          SELECT l.application_id, ${token}, ${until}, array_agg(l.delivery_id), ${held ? `${held.holder}, ${held.slots}` : 'NULL, NULL'}
            FROM ${leases} l GROUP BY l.application_id
          ON CONFLICT (application_id, lease_token) DO UPDATE SET delivery_ids = c.delivery_ids || EXCLUDED.delivery_ids`;
}
