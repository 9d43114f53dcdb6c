import { endpointClaimsOf, endpointInFlight, leased, queueRowsIn, recordClaims, tryClaimLock } from './queue.sql';

/**
 * Per-webhook throttling (PRODUCT.md §10), shared by every worker process through PostgreSQL.
 * ARCHITECTURE.md ("Throttling") explains the design and the bound it gives.
 *
 * A throttled webhook's send slots are `THROTTLE_SPACING / per_second` seconds apart; the next
 * free one is `webhook_throttles.next_slot_at`, in database time. A claim gives each due delivery
 * of a throttled webhook the next slot under that row's lock. A slot within the hold horizon is
 * claimed and the worker holds the delivery until the slot comes; a later slot is reserved: the
 * delivery stays in the queue with the slot in `throttle_slot_at` and becomes due again shortly
 * before it, so a backlog leaves the claim's due range instead of being walked past by every
 * claim (no head-of-line blocking), and each delivery is rescheduled once.
 */

/**
 * Slots are this much further apart than 1 / per_second: an attempt that reaches the receiver
 * up to 3% of a second after its slot (the worker's timer, the request on the wire) still keeps
 * every second at or under the limit. The price is 3% of the throughput at the limit.
 */
export const THROTTLE_SPACING = 1.03;

/** Slots this close are claimed and held by the worker; later ones are reserved. */
export const THROTTLE_HORIZON_MS = 150;

/**
 * A delivery with a reserved slot is due again this long before it. Inside the horizon by a
 * margin, so the claim that takes it holds it rather than finding it a few milliseconds early
 * and leaving it waiting again; and early enough that a claim delayed by a busy machine still
 * comes before the slot has passed.
 */
const DUE_BEFORE_SLOT_MS = 100;

/**
 * A slot is used at most this late. The worker hands back a delivery it could not send by then,
 * and a reservation this far in the past is dropped for a new slot: a late send would crowd the
 * next second.
 */
export const THROTTLE_LATE_MS = 20;

/**
 * The claim, for the due deliveries of throttled webhooks the main claim statement left alone
 * (it never locks webhook_throttles, so webhooks without a throttle never pay for this).
 * $1 now (the worker's clock), $2 delivery ids, $3 lease token, $4 lease expiry,
 * $5 hosts this worker has attempts in flight to, $6 how many each, $7 the per-host cap,
 * $8 the endpoint cap across workers (HERALD_ENDPOINT_MAX_IN_FLIGHT, unless the webhook has its own).
 *
 * Deliveries are locked SKIP LOCKED and re-checked (another worker may have taken them since);
 * an application whose claim lock another claim holds is left for later (queue.sql.ts,
 * tryClaimLock); webhook_throttles rows are locked in application order, so concurrent claims
 * never deadlock. Per host, no more are held than the worker has room for, and per endpoint no
 * more than the room its cap leaves across workers (held ones are recorded in endpoint_claims as
 * the main claim's are); the rest keep their reserved slot and are due again at once. Returns every delivery it touched, held or not, with its slot, and
 * the database's clock as the statement ends (for the worker to turn slots into its own time).
 */
export const CLAIM_THROTTLED_SQL = `
  WITH clock AS MATERIALIZED (SELECT clock_timestamp() AS at),
  served AS MATERIALIZED (
    SELECT a.application_id FROM (
      SELECT DISTINCT application_id FROM delivery_queue WHERE delivery_id = ANY($2::text[]) ORDER BY application_id OFFSET 0) a
     WHERE ${tryClaimLock('a.application_id')}
  ),
  claims AS (
    ${endpointClaimsOf('served', '$1')}
  ),
  in_flight AS (
    ${endpointInFlight('claims', '$1')}
  ),
  room AS (
    SELECT s.application_id, COALESCE(w.max_in_flight, $8::int) - COALESCE(o.counted, 0) AS room
      FROM served s JOIN webhooks w USING (application_id)
      LEFT JOIN (SELECT application_id, sum(counted) AS counted FROM in_flight GROUP BY application_id) o USING (application_id)
  ),
  candidates AS (
    SELECT q.delivery_id AS id, q.application_id, q.due_at, q.throttle_slot_at, w.destination_host,
           interval '1 second' * ${THROTTLE_SPACING} / w.throttle_per_second AS spacing
      FROM delivery_queue q
      JOIN webhooks w ON w.application_id = q.application_id AND q.destination = 'webhook'
      JOIN served sv ON sv.application_id = q.application_id
     WHERE q.delivery_id = ANY($2::text[])
       AND NOT q.paused AND NOT q.blocked AND q.due_at <= $1 AND NOT ${leased('q', '$1')}
       AND w.throttle_per_second IS NOT NULL AND q.destination = 'webhook'
       FOR UPDATE OF q SKIP LOCKED
  ),
  fresh AS (
    -- Without a slot it can still use: takes the next ones, oldest first.
    SELECT c.id, c.application_id, c.spacing, row_number() OVER (PARTITION BY c.application_id ORDER BY c.due_at, c.id) AS n
      FROM candidates c, clock
     WHERE c.throttle_slot_at IS NULL OR c.throttle_slot_at < clock.at - interval '${THROTTLE_LATE_MS} milliseconds'
  ),
  needed AS (
    SELECT application_id, spacing, count(*) AS slots FROM fresh GROUP BY application_id, spacing
  ),
  taken AS (
    INSERT INTO webhook_throttles AS t (application_id, next_slot_at)
    SELECT n.application_id, clock.at + n.slots * n.spacing FROM needed n, clock ORDER BY n.application_id
    ON CONFLICT (application_id) DO UPDATE
       SET next_slot_at = GREATEST(t.next_slot_at, clock_timestamp()) + (EXCLUDED.next_slot_at - (SELECT at FROM clock))
    RETURNING t.application_id, t.next_slot_at
  ),
  slotted AS (
    SELECT f.id, t.next_slot_at - (n.slots - f.n + 1) * f.spacing AS slot
      FROM fresh f JOIN needed n USING (application_id) JOIN taken t USING (application_id)
    UNION ALL
    SELECT c.id, c.throttle_slot_at FROM candidates c, clock
     WHERE c.throttle_slot_at >= clock.at - interval '${THROTTLE_LATE_MS} milliseconds'
  ),
  decided AS (
    SELECT s.id, s.slot,
           s.slot <= clock.at + interval '${THROTTLE_HORIZON_MS} milliseconds'
             AND row_number() OVER (PARTITION BY c.destination_host ORDER BY s.slot)
                 <= $7::int - COALESCE(($6::int[])[array_position($5::text[], c.destination_host)], 0)
             AND row_number() OVER (PARTITION BY c.application_id ORDER BY s.slot) <= r.room AS hold
      FROM slotted s JOIN candidates c USING (id) JOIN room r USING (application_id), clock
  ),
  moved AS (
  UPDATE delivery_queue q
     SET lease_token = CASE WHEN x.hold THEN $3::text END,
         lease_until = CASE WHEN x.hold THEN $4::timestamptz END,
         due_at = CASE WHEN x.hold THEN q.due_at
                       ELSE $1::timestamptz + (x.slot - interval '${DUE_BEFORE_SLOT_MS} milliseconds' - clock.at) END,
         throttle_slot_at = CASE WHEN x.hold THEN NULL ELSE x.slot END,
         slot_reserved_at = CASE WHEN x.hold THEN NULL ELSE $1::timestamptz END
    FROM decided x, clock, deliveries d
   WHERE ${queueRowsIn('q', '$2::text[]')} AND q.delivery_id = x.id AND d.application_id = q.application_id AND d.id = q.delivery_id
  RETURNING d.id, d.event_id, d.application_id, d.event_type, d.attempt_count, d.manual_attempt, d.ignores_subscription,
            q.due_at AS next_attempt_at, q.ordering_key,
            x.hold, x.slot::text AS slot, extract(epoch FROM x.slot) * 1000 AS slot_ms,
            extract(epoch FROM clock_timestamp()) * 1000 AS database_ms
  ),
  recorded AS (
    ${recordClaims('(SELECT id AS delivery_id, application_id FROM moved WHERE hold)', '$3', '$4')}
  )
  SELECT * FROM moved`;
