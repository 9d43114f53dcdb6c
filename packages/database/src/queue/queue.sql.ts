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
 * For a statement that joins queue rows `q` to the delivery ids it works on: the same ids, `ids`
 * (an SQL array expression), named as an array too. The rows are then index probes in any plan,
 * whatever PostgreSQL believes of the queue's size; joined alone, a queue of dead rows last
 * analyzed nearly empty was read whole for every claim and finish (17,681 rows read to finish 6;
 * bench/README.md, "Issue 20, fourth sitting").
 */
export function queueRowsIn(q: string, ids: string): string {
  return `${q}.delivery_id = ANY (${ids})`;
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
            UPDATE delivery_queue q SET blocked = false FROM next_heads h
             WHERE ${queueRowsIn('q', 'ARRAY(SELECT delivery_id FROM next_heads)')} AND q.delivery_id = h.delivery_id AND q.blocked
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
 * A delivery's status as the API shows it, for `d` (deliveries): a pending delivery whose queue
 * row holds a live lease is `sending`. The row is looked up by its key in a scalar subquery, an
 * index probe for each delivery shown, whatever PostgreSQL believes of the queue's size. Joined
 * instead, a queue last analyzed when its pages held only dead rows is estimated empty, and a
 * plan that reads it whole for every delivery costs as little as one that probes it: the
 * console's page of 26 from a log of 100,000 paused deliveries read 2.6 million queue rows
 * (350 ms), and in CI its next page never came.
 */
export function shownStatus(d: string): string {
  const leasedRow = `(SELECT ${leased('q', 'now()')} FROM delivery_queue q WHERE q.delivery_id = ${d}.id)`;
  return `(CASE WHEN ${d}.status = 'pending' AND ${leasedRow} THEN 'sending' ELSE ${d}.status::text END)`;
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
 * What the endpoint_claims rows say for the applications `served` (a relation with an
 * application_id) at `now` (an SQL expression): per row whose lease lasts and that lists one of
 * them, and per application the row lists (served or not), the row's holder, lease, the slots it
 * gave its holder there (null: the throttle's, or no slots) and its live leases there (`live`):
 * the deliveries the claim recorded whose queue entry still holds its lease. A delivery that
 * finished left the queue; one handed back or rescheduled lost its lease; one whose worker died
 * has a lease that ran out, and whoever claims it next records it under its own token. `latest`:
 * the row is its holder's latest of the application (the slots it holds there, even with nothing in
 * flight), among these rows. `live_any`: the row has a live lease, in any application.
 *
 * With `self` (an SQL expression, the holder claiming), that holder's own rows are not counted
 * (`live` is null): a claim sets its own slots anew, and needs of its own rows only whether each
 * still has a live lease (for deleting the spent ones), one probe per row that stops at the first
 * live lease. Counted per application, a worker's own rows were most of a claim's time with single
 * publishes: twenty applications times each row's probes of the queue (bench/README.md, "Issue 20,
 * seventh sitting"). Yields (application_id, lease_token, throttled, lease_until, holder, slots,
 * live, live_any, latest), for endpointInFlight.
 */
export function endpointClaimsOf(served: string, now: string, self?: string): string {
  // Never null: a claim without a holder (null) has no rows of its own.
  const own = self ? `COALESCE(r.holder = ${self}, false)` : 'false';
  const liveLease = (ids: string) => `${queueRowsIn('l', ids)} AND l.lease_token = r.lease_token AND l.lease_until >= ${now}`;
  return `SELECT u.application_id, r.lease_token, r.throttled, r.lease_until, r.holder,
                 r.holder IS NOT NULL
                   AND row_number() OVER (PARTITION BY u.application_id, r.holder ORDER BY r.lease_until DESC, r.lease_token DESC) = 1 AS latest,
                 r.slots[array_position(r.slot_applications, u.application_id)] AS slots,
                 c.live, COALESCE(c.live > 0, r.own_live) AS live_any
            FROM (
              -- OFFSET 0: a row's own probe runs once per row, not once per application it lists.
              SELECT r.*, ${own} AS own,
                     CASE WHEN ${own} THEN EXISTS (SELECT 1 FROM delivery_queue l WHERE ${liveLease('r.delivery_ids')}) END AS own_live
                FROM endpoint_claims r
               WHERE r.lease_until >= ${now} AND r.application_ids && ARRAY(SELECT application_id FROM ${served})
              OFFSET 0) r
           CROSS JOIN LATERAL (
             SELECT x.application_id, array_agg(x.delivery_id) AS delivery_ids
               FROM unnest(r.application_ids, r.delivery_ids) AS x(application_id, delivery_id) GROUP BY x.application_id) u
           CROSS JOIN LATERAL (
             SELECT CASE WHEN NOT r.own THEN (SELECT count(*) FROM delivery_queue l WHERE ${liveLease('u.delivery_ids')}) END AS live) c`;
}

/**
 * Attempts in flight per application and holder at `now`, from `claims` (endpointClaimsOf): a worker holding slots (the main claim's rows) counts the
 * least of the slots its latest claim holds (each claim's row says how many the worker holds
 * from then on; older rows lend none) and its live leases, since it runs no more attempts at once
 * than either; rows without a holder (the throttle's) count their live leases. A holder's count
 * only falls between its claims (its leases end), and each claim sets its slots to no more than
 * the cap leaves beside the others' counts, under the application's claim lock: so the cap holds.
 * A holder's latest row of an application is kept while its lease lasts (claims delete only rows
 * with nothing in flight that are no holder's latest, DeliveryQueueRepository's CLAIM_SQL), so
 * the slots counted are the ones the worker uses. The claiming holder's own rows, when
 * endpointClaimsOf left them uncounted, count their slots: the claim reads only the others'.
 * Yields (application_id, holder, counted).
 */
export function endpointInFlight(claims: string, now: string): string {
  return `SELECT application_id, holder,
                 CASE WHEN holder IS NULL THEN sum(live)
                      ELSE LEAST((array_agg(slots ORDER BY lease_until DESC, lease_token DESC) FILTER (WHERE lease_until >= ${now}))[1],
                                 sum(live)) END AS counted
            FROM ${claims} GROUP BY application_id, holder`;
}

/**
 * An INSERT recording the deliveries `leases` (delivery_id, application_id) leased with `token`
 * until `until`, in one endpoint_claims row for the statement: a row per claim, not per claim and
 * application, so a claim serving twenty applications writes one row, not twenty (each row and
 * its index entries were about 290 bytes of WAL; bench/README.md, "Issue 20, fifth sitting").
 * With `held`, the row is the main claim's, `held.holder`'s, and gives it, for each application
 * leased for, the slots `held.slots(a)` (an SQL expression of the application id `a`); without,
 * it is the throttle's row of the same claim (`throttled`), whose deliveries count without slots.
 * Each claim's token is new, so a row is never written again once made (another claim may be
 * deleting it).
 */
export function recordClaims(
  leases: string,
  token: string,
  until: string,
  held?: { holder: string; slots: (applicationId: string) => string },
): string {
  const applications = `(SELECT DISTINCT x.application_id AS a FROM ${leases} x) applications`;
  return `INSERT INTO endpoint_claims (lease_token, throttled, holder, lease_until, application_ids, delivery_ids, slot_applications, slots)
          SELECT ${token}, ${held ? 'false' : 'true'}, ${held ? held.holder : 'NULL'}, ${until}, array_agg(l.application_id), array_agg(l.delivery_id),
                 ${held ? `(SELECT array_agg(a ORDER BY a) FROM ${applications}), (SELECT array_agg(${held.slots('a')} ORDER BY a) FROM ${applications})` : 'NULL, NULL'}
            FROM ${leases} l HAVING count(*) > 0
          -- A token used for more than one claim (the worker never does so) adds to its row.
          ON CONFLICT (lease_token, throttled) DO UPDATE
             SET application_ids = endpoint_claims.application_ids || EXCLUDED.application_ids,
                 delivery_ids = endpoint_claims.delivery_ids || EXCLUDED.delivery_ids`;
}
