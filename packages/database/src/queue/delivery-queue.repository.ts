import { DEFAULT_RETRY_POLICY, HERALD_CONFIG, type DeliveryDestination, type DeliveryStatus, type HeraldConfig } from '@herald/core';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { Batcher } from '../batching/batcher';
import { analyzeUnlessRecent } from '../housekeeping/planner-statistics';
import { PgPool, PreparedStatement, preparedStatement, SqlQuery } from '../pg-pool';
import { DeliveryAttemptRecord, WebhookRecord } from '../records';
import { CLAIM_THROTTLED_SQL } from './throttle.sql';
import { WebhookConfig, WebhookConfigs } from './webhook-configs';
import {
  DEQUEUED_COLUMNS,
  ENQUEUED_COLUMNS,
  ORDERING_LOCK_SQL,
  cancelDequeued,
  enqueue,
  leased,
  endpointInFlight,
  endpointClaimsOf,
  queueRowsIn,
  ready,
  recordClaims,
  tryClaimLock,
  unblockNext,
} from './queue.sql';
import { recordPendingStatistics } from '../statistics/delivery-statistics.sql';

export interface ClaimedDelivery {
  id: string;
  eventId: string;
  applicationId: number;
  eventType: string;
  /** Attempts already recorded; this one will be number attemptCount + 1. */
  attemptCount: number;
  /** The ordering key it is delivered in the order of (PRODUCT.md §13), or null. */
  orderingKey: string | null;
  manualAttempt: boolean;
  ignoresSubscription: boolean;
  /**
   * Its webhook is throttled: attempt it at its slot (`slotMs`, epoch milliseconds on the
   * database's clock; see ClaimBatch.databaseTimeMs), never later than THROTTLE_LATE_MS after.
   * `slot` is the same time as PostgreSQL wrote it, for handing it back with the slot kept.
   * Null when the webhook has no throttle.
   */
  throttle: { slot: string; slotMs: number } | null;
  /** What its attempt needs, read as it was claimed. */
  context: AttemptContextRecord;
}

export interface ClaimOptions {
  limit: number;
  token: string;
  now: Date;
  leaseUntil: Date;
  /** Deliveries this worker holds per destination host: attempting, waiting for a slot, or held for a throttle slot. */
  hostsInFlight: ReadonlyMap<string, number>;
  /**
   * Attempts at once per host (HERALD_WORKER_HOST_CONCURRENCY): a host is held at most
   * `deliveriesPerSlot` times this, less what hostsInFlight says; and an endpoint's slots are at most this.
   */
  hostCap: number;
  /**
   * The worker process holding the claim's endpoint slots (the same for all its claims); by
   * default the claim's token, so each claim is a holder of its own.
   */
  holder?: string;
  /** Deliveries this worker holds per application (attempting or waiting for one of its slots). */
  heldPerApplication?: ReadonlyMap<number, number>;
  /**
   * Deliveries held per endpoint slot (default 1): with 2, a worker holds one waiting behind each
   * attempt, started the moment the attempt ends rather than after its finish commits and a claim.
   */
  deliveriesPerSlot?: number;
  /** The same per application, where it is not `deliveriesPerSlot`; a host is held at most hostCap times the most of them. */
  deliveriesPerSlotOf?: ReadonlyMap<number, number>;
  /**
   * Hosts with less room than this are not claimed for at all (default 1: only hosts at the cap):
   * a claim that could take one or two deliveries for a busy host costs a statement and a commit
   * each; the worker waits until a host has room for a useful batch.
   */
  minHostRoom?: number;
  /**
   * Attempts in flight per endpoint across every worker (HERALD_ENDPOINT_MAX_IN_FLIGHT), for
   * webhooks without a max_in_flight of their own.
   */
  endpointCap: number;
  /** The walk goes on from after this application (the last one the previous claim visited; 0 at first). */
  afterApplicationId?: number;
  /** A claim visits at most this many applications with queued entries (default APPLICATIONS_PER_CLAIM). */
  applicationsPerClaim?: number;
}

/**
 * Applications one claim visits at most: a probe of the ready index each (about 5 µs). With more
 * applications that have entries queued, claims take turns round them (ClaimBatch.lastVisited).
 */
export const APPLICATIONS_PER_CLAIM = 128;

export interface ClaimBatch {
  /** Claimed: to attempt now, or (throttled) when their slot comes. */
  deliveries: ClaimedDelivery[];
  /** Due deliveries of throttled webhooks the claim looked at and left waiting for a later slot. */
  waiting: number;
  /**
   * Per application the claim leased webhook deliveries for: the endpoint slots the worker holds
   * with them (attempts it may run at once, until the lease ends; ClaimOptions.holder).
   */
  endpointSlots: ReadonlyMap<number, number>;
  /** The database's clock (epoch ms) as it answered the throttle's part; null when there was none. */
  databaseTimeMs: number | null;
  /** When the next delivery falls due after the claim's `now`, or a lease runs out; null when none will. */
  nextClaimableAt: Date | null;
  /** The last application the claim's walk visited: the next claim goes on from there. */
  lastVisited: number;
  /**
   * The walk stopped at applicationsPerClaim before reaching the last application, or gave an
   * application only its share of the limit though it had room for more: more may be due, claim
   * again (from lastVisited). False once a walk reaches the last one and cuts nothing, so claims
   * taking turns round many applications always come to rest.
   */
  moreApplications: boolean;
  /**
   * An application it served had due deliveries its endpoint had no room for (or it took all its
   * room): when attempts end, a claim may find more. False, the claim took all that was due (but
   * what it skipped for busy hosts, and what other claims were serving: lockedOut).
   */
  leftForRoom: boolean;
  /**
   * An application it visited had due deliveries but another claim held its claim lock (queue.sql.ts,
   * tryClaimLock): that claim serves it, but may have read the queue before this one did.
   */
  lockedOut: boolean;
  /**
   * The snapshot the claim read the queue in (`xmin:xmax:xip,…`, pg_current_snapshot): which
   * publishes' transactions it saw (NewDeliveries). Null when PostgreSQL did not say.
   */
  snapshot: string | null;
}

interface ClaimedRow {
  id: string;
  ordering_key: string | null;
  event_id: string;
  application_id: number;
  event_type: string;
  attempt_count: number;
  manual_attempt: boolean;
  ignores_subscription: boolean;
}

function toClaimedDelivery(row: ClaimedRow, throttle: ClaimedDelivery['throttle'], context: AttemptContextRecord): ClaimedDelivery {
  return {
    id: row.id,
    eventId: row.event_id,
    applicationId: Number(row.application_id),
    eventType: row.event_type,
    attemptCount: Number(row.attempt_count),
    orderingKey: row.ordering_key ?? null,
    manualAttempt: row.manual_attempt,
    ignoresSubscription: row.ignores_subscription,
    throttle,
    context,
  };
}

/** Everything an attempt needs, read when the attempt starts (the stored config of that moment). */
export interface AttemptContextRecord {
  deliveryId: string;
  event: {
    id: string;
    type: string;
    applicationId: number;
    createdAt: Date;
    payload: string;
    orderingKey: string | null;
    /** The publish span's trace context (PRODUCT.md §16); null when traces were off as it was published. */
    traceContext: string | null;
  };
  /** null when the webhook has been deleted since the event was published. */
  webhook: WebhookRecord | null;
  /** False while the webhook is disabled (PRODUCT.md §10): the delivery is paused, not attempted. */
  webhookActive: boolean;
  /** The application's webhook, or the operator's (then `webhook` is the operational webhook's, with the default retry policy). */
  destination: DeliveryDestination;
  /**
   * The host of `webhook`'s URL as stored beside it (`destination_host`, written with the URL):
   * what the host caps count, read rather than parsed again per attempt. '' without a webhook.
   */
  destinationHost: string;
  /** null when the application no longer subscribes to the event. */
  subscription: { ensureDelivery: boolean; active: boolean } | null;
  /** Secrets valid now, current first. */
  secrets: string[];
}

export interface FinishOutcome {
  status: Extract<DeliveryStatus, 'succeeded' | 'failed' | 'pending'>;
  nextAttemptAt: Date | null;
  now: Date;
}

/** A claimed delivery as the statements after its claim name it. */
export type ClaimRef = Pick<ClaimedDelivery, 'id' | 'applicationId' | 'orderingKey'>;

/** A claimed delivery as its finish names it: whether the attempt was a manual one decides whether its outcome is counted again. */
export type FinishRef = ClaimRef & Pick<ClaimedDelivery, 'manualAttempt'>;

interface FinishItem {
  delivery: FinishRef;
  token: string;
  outcome: FinishOutcome;
  attempt: NewAttemptRecord;
  exhaustedNotice: ExhaustedNoticeIds | null;
}

/** A claim handed to a finisher lane (DeliveryQueueRepository.claimAfterFinishing). */
export interface RidingClaim {
  /** What it claimed; null when it claimed nothing after all, or was withdrawn. */
  claimed: Promise<ClaimBatch | null>;
  withdraw: () => boolean;
}

/** A claim waiting to ride on a lane's next finish (DeliveryQueueRepository.claimAfterFinishing). */
interface ClaimRider {
  options: () => ClaimOptions | null;
  resolve: (claimed: ClaimBatch | null) => void;
  reject: (error: unknown) => void;
}

/** Runs a rider's claim on its own (nothing to finish with it) and settles it. */
async function settleClaim(rider: ClaimRider, claim: (options: ClaimOptions) => Promise<ClaimBatch>): Promise<void> {
  try {
    const options = rider.options();
    rider.resolve(options === null ? null : await claim(options));
  } catch (error) {
    rider.reject(error);
  }
}

/**
 * Ids for the `delivery.exhausted` notice of a delivery that fails for good on this attempt
 * (PRODUCT.md §10); queued with the attempt, and only when an operational webhook is configured.
 */
export interface ExhaustedNoticeIds {
  eventId: string;
  deliveryId: string;
}

/** The queue as /metrics reports it (DeliveryQueueRepository.backlog). */
export interface DeliveryBacklog {
  due: number;
  scheduled: number;
  sending: number;
  /** Kept while their webhook is disabled (PRODUCT.md §10). */
  paused: number;
  oldestDueSeconds: number;
  /** Webhooks by state. */
  webhooks: { active: number; disabled: number };
}

/** An attempt to record; the database numbers it. */
export type NewAttemptRecord = Omit<DeliveryAttemptRecord, 'number'>;

/** An attempt's context; the webhook's columns are null when it has been deleted. */
type ContextRow = {
  delivery_id: string;
  event_id: string;
  event_type: string;
  application_id: number;
  event_created_at: Date;
  payload: string;
  event_ordering_key: string | null;
  event_trace_context: string | null;
  ensure_delivery: boolean | null;
  active: boolean | null;
  webhook_state: string | null;
  /** Its webhook's configuration version (WebhookConfigs holds what it stands for). */
  config_version: string | null;
  destination: DeliveryDestination;
  operational_url: string | null;
  operational_headers: unknown;
  operational_secret: string | null;
  destination_host: string | null;
};

/**
 * The columns of an attempt's context (ContextRow) for the delivery `d` (any relation with the
 * deliveries' id, destination, application_id, event_type and event_id), joined by contextJoins.
 * Of the webhook, its state, host and configuration version only: the worker keeps the
 * configuration itself by version (WebhookConfigs).
 */
function contextColumns(d: string): string {
  return `${d}.id AS delivery_id, ${d}.destination, e.id AS event_id, e.event_type, e.application_id, e.created_at AS event_created_at,
          e.payload, e.ordering_key AS event_ordering_key, e.trace_context AS event_trace_context, w.config_version, w.state AS webhook_state,
          s.ensure_delivery, s.active,
          ow.url AS operational_url, ow.headers AS operational_headers, ow.secret AS operational_secret,
          CASE WHEN ${d}.destination = 'operational' THEN ow.destination_host ELSE w.destination_host END AS destination_host`;
}

/**
 * The joins contextColumns reads; no event (it cannot happen: a foreign key) leaves its columns
 * null. `events` is the relation the events are read from: the table, or the claim's own rows of it.
 */
function contextJoins(d: string, events = 'events'): string {
  return `LEFT JOIN ${events} e ON e.application_id = ${d}.application_id AND e.id = ${d}.event_id
          LEFT JOIN webhooks w ON w.application_id = ${d}.application_id AND ${d}.destination = 'webhook'
          LEFT JOIN subscriptions s ON s.application_id = ${d}.application_id AND s.event_type = ${d}.event_type AND ${d}.destination = 'webhook'
          LEFT JOIN operational_webhook ow ON ${d}.destination = 'operational'`;
}

/** Contexts of the deliveries $1 (loadContexts). */
const LOAD_CONTEXTS = preparedStatement(
  'load_contexts',
  `SELECT ${contextColumns('d')}
     FROM delivery_queue q JOIN deliveries d ON d.application_id = q.application_id AND d.id = q.delivery_id ${contextJoins('d')}
    WHERE q.delivery_id = ANY($1::text[])`,
);

/** The walk's first step: the first application (with its earliest ready entry) where `where` holds. */
function firstReadyApplication(where: string, visited: string): string {
  return `(SELECT q.application_id, q.due_at AS head_due_at, ${visited} AS visited FROM delivery_queue q
            WHERE ${ready('q')} AND ${where}
            ORDER BY q.application_id, q.due_at LIMIT 1)`;
}

/** The walk's next step: the application after `previous` (with its earliest ready entry); one index probe. */
function nextReadyApplication(previous: string, andWhere: string): string {
  return `SELECT q.application_id, q.due_at FROM delivery_queue q
           WHERE ${ready('q')} AND q.application_id > ${previous} ${andWhere}
           ORDER BY q.application_id, q.due_at LIMIT 1`;
}

/**
 * The slots the claim gives its worker at the application `a` (an SQL expression), from the
 * claim's `room`: looked up in two arrays built once per claim, not by a scan of `room` per row
 * asking (a CTE has no index: that was applications × rows claimed).
 */
function slotsGiven(a: string): string {
  return `(ARRAY(SELECT r.slots FROM room r ORDER BY r.application_id))[array_position(ARRAY(SELECT r.application_id FROM room r ORDER BY r.application_id), ${a})]`;
}

/**
 * The claim (DeliveryQueueRepository.claim): $1 now, $2 hosts not to claim for, $3 the limit,
 * $4 the lease token, $5 the lease's end, $6 the per-host cap (per worker), $7 hosts with attempts
 * in flight and $8 how many each, $9 the endpoint cap across workers (HERALD_ENDPOINT_MAX_IN_FLIGHT;
 * a webhook's max_in_flight overrides it), $10 the application to walk on from (the last one the
 * previous claim visited), $11 how many applications one claim visits at most, $12 the worker
 * holding the slots (ClaimOptions.holder), $13 applications it holds deliveries of (or holds
 * deliveries per slot of its own for) and $14 how many each, $15 deliveries it holds per slot, $16
 * the same per application of $13, $17 the most per slot (a host's held deliveries are capped at
 * $6 times it).
 *
 * Fair between applications (PRODUCT.md §17). The walk is a loose index scan of
 * delivery_queue_ready_idx (application_id, due_at): one probe per application with entries,
 * which reads that application's earliest (`visited`), from after $10 round to it again, at most
 * $11 of them. An application with something due is served only under its claim lock
 * (queue.sql.ts, tryClaimLock: one claim at a time per application across workers, none waits);
 * the attempts the other workers have in flight to its endpoint are counted from endpoint_claims
 * (endpointInFlight); this worker holds the slots the cap leaves (at most its per-host cap), and
 * gets up to $15 deliveries per slot less those it holds (`room`; none while that is less than a
 * quarter of the cap, as for hosts), oldest first, read from its own part of the index. So
 * no application's backlog is ever walked to reach another's, and a host with room for one more
 * never has fifty rows claimed and handed back. The picks are ranked round-robin (every
 * application's first, then every second…), each host gets at most the room this worker has left
 * for it (`fitting`), and the LIMIT takes the first. Herald's own notices to the operator's
 * endpoint are claimed by due time beside the walk (`operational`, their own small index).
 *
 * Rows of throttled webhooks go on to the throttle's own statement (throttle.sql.ts), which runs
 * only when there are some, and which holds the claim lock and the cap the same way.
 *
 * The claim writes only the queue row's lease, two columns no index names: a HOT update (it
 * checks again that the row is still claimable, as the walk does not lock rows: the claim lock
 * keeps other claims away, and a pause or a cancel meanwhile wins). It inserts one endpoint_claims
 * row per application it leased for (with the slots the worker holds from then on, returned as
 * `endpoint_slots`) and deletes those with nothing left in flight but a worker's latest: no row update.
 * The claimed rows come back with what their attempts need (their deliveries' rows and
 * contexts): one round trip from NOTIFY to the attempt. Every row (and a row of nulls when
 * nothing was claimed) also carries when the next entry the walk saw falls due
 * (`next_claimable_at`), the last application it visited (the next claim's $10), and whether it
 * stopped at $11 before reaching the last application, or cut an application at its share of the
 * LIMIT with room left (`more_applications`: claim again; a run of such claims ends at the last
 * application, or when nothing is cut, so it never spins), whether an application served had due
 * work its room left (`left_for_room`), and the rows that fitted but a throttled webhook's, which
 * the lease passed over (`throttled_ids`, for the throttle's statement). Exported for the bench,
 * which shows its plan.
 */
export const CLAIM_SQL = `WITH RECURSIVE forward AS (
         ${firstReadyApplication('q.application_id > $10', '1')}
         UNION ALL
         SELECT n.application_id, n.due_at, f.visited + 1 FROM forward f
          CROSS JOIN LATERAL (${nextReadyApplication('f.application_id', 'AND q.application_id > $10')}) n
          WHERE f.visited < $11
       ), wrapped AS (
         -- Round to the start, up to where this walk began, with what is left of $11.
         ${firstReadyApplication('q.application_id <= $10 AND (SELECT count(*) FROM forward) < $11', '(SELECT count(*) FROM forward) + 1')}
         UNION ALL
         SELECT n.application_id, n.due_at, w.visited + 1 FROM wrapped w
          CROSS JOIN LATERAL (${nextReadyApplication('w.application_id', 'AND q.application_id <= $10')}) n
          WHERE w.visited < $11
       ), visited AS (
         SELECT * FROM forward UNION ALL SELECT * FROM wrapped
       ), due AS MATERIALIZED (
         -- Materialized, so the lock is the last test: only applications with something due are locked.
         SELECT v.application_id, w.destination_host AS host, w.throttle_per_second IS NOT NULL AS throttled,
                COALESCE(w.max_in_flight, $9::int) AS cap
           FROM visited v LEFT JOIN webhooks w ON w.application_id = v.application_id
          WHERE v.head_due_at <= $1 AND (w.destination_host IS NULL OR NOT (w.destination_host = ANY($2::text[])))
       ), served AS MATERIALIZED (
         SELECT d.* FROM due d WHERE ${tryClaimLock('d.application_id')}
       ), claims AS (
         ${endpointClaimsOf('served', '$1', '$12')}
       ), in_flight AS (
         ${endpointInFlight('claims', '$1')}
       ), slots AS (
         -- The slots this worker ($12) holds after the claim: what the cap leaves beside the
         -- others' attempts in flight, at most its per-host cap.
         SELECT s.application_id, s.host, s.throttled, s.cap,
                GREATEST(LEAST(s.cap - COALESCE(o.counted, 0), $6::int), 0)::int AS slots
           FROM served s LEFT JOIN (
             SELECT f.application_id, sum(f.counted) AS counted FROM in_flight f WHERE f.holder IS DISTINCT FROM $12 GROUP BY f.application_id
           ) o USING (application_id)
       ), room AS (
         -- Each one's room: $15 (or $16) deliveries per slot (the worker starts a held one the moment
         -- an attempt ends) less those it holds already ($13, $14); and its share of the LIMIT
         -- (ceil(LIMIT / served)): the walk reads no more of an application than it could be given.
         SELECT s.application_id, s.host, s.throttled, s.slots,
                GREATEST(s.slots * COALESCE(($16::int[])[array_position($13::int[], s.application_id)], $15::int)
                         - COALESCE(($14::int[])[array_position($13::int[], s.application_id)], 0), 0) AS room,
                (($3::int + count(*) OVER () - 1) / count(*) OVER ())::int AS share,
                GREATEST(1, LEAST(s.cap, $6::int) / 4) AS min_room
           FROM slots s
       ), picked AS (
         -- Numbered here, over the few rows read, not inside the read: a window there would read
         -- on through every row due at the same moment as the last one taken.
         SELECT p.delivery_id AS id, p.due_at, r.host, r.throttled,
                row_number() OVER (PARTITION BY r.application_id ORDER BY p.due_at, p.delivery_id) AS n, r.application_id,
                -- Cut at its share with room left: more of it may be claimed at once.
                count(*) OVER (PARTITION BY r.application_id) >= r.share AND r.share < r.room AS cut,
                -- Took all the room it had: its endpoint had due work left for later (left_for_room).
                count(*) OVER (PARTITION BY r.application_id) >= r.room AS took_room
           FROM room r CROSS JOIN LATERAL (
             SELECT q.delivery_id, q.due_at
               FROM delivery_queue q
              WHERE q.application_id = r.application_id AND ${ready('q')} AND q.due_at <= $1 AND NOT ${leased('q', '$1')}
              -- A throttled webhook's due rows all go to the throttle's statement, which holds no
              -- more than the room and reserves later slots for the rest.
              -- An endpoint with room for less than a quarter of its cap is left until it has: topping
              -- it up one or two at a time would cost a claim (a commit) per delivery or two.
              ORDER BY q.due_at
              LIMIT CASE WHEN r.throttled THEN r.share WHEN r.room < r.min_room THEN 0 ELSE LEAST(r.room, r.share) END) p
       ), operational_due AS (
         SELECT q.delivery_id AS id, q.due_at
           FROM delivery_queue q
          WHERE q.destination = 'operational' AND NOT q.paused AND q.due_at <= $1 AND NOT ${leased('q', '$1')}
          ORDER BY q.due_at LIMIT $3
            FOR UPDATE SKIP LOCKED
       ), operational AS (
         SELECT id, due_at, NULL::text AS host, false AS throttled, row_number() OVER (ORDER BY due_at) AS n,
                NULL::int AS application_id, false AS cut, false AS took_room
           FROM operational_due
       ), fitting AS (
         -- A throttled webhook's rows all go on to the throttle's claim, which holds what fits and
         -- reserves later slots for the rest (throttle.sql.ts).
         SELECT id, n, due_at FROM (
           SELECT id, host, throttled, n, due_at,
                  row_number() OVER (PARTITION BY host, throttled ORDER BY n, due_at, id) AS host_n
             FROM (SELECT * FROM picked UNION ALL SELECT * FROM operational) candidates) ranked
          WHERE host IS NULL OR throttled OR host_n <= $6::int * $17::int - COALESCE(($8::int[])[array_position($7::text[], host)], 0)
          ORDER BY n, due_at LIMIT $3
       ), leases AS (
         -- By the ids alone, not joined to fitting: a CTE has no index, and PostgreSQL ran that
         -- join as a nested loop, fitting read whole once per row leased (n² for n leased).
         UPDATE delivery_queue q SET lease_token = $4, lease_until = $5
          WHERE ${queueRowsIn('q', 'ARRAY(SELECT id FROM fitting)')}
            AND NOT q.paused AND NOT q.blocked AND q.due_at <= $1 AND NOT ${leased('q', '$1')}
            AND (q.destination <> 'webhook'
                 OR NOT EXISTS (SELECT 1 FROM webhooks t WHERE t.application_id = q.application_id AND t.throttle_per_second IS NOT NULL))
         RETURNING q.delivery_id, q.application_id, q.destination, q.ordering_key, q.due_at
       ), recorded AS (
         ${recordClaims("(SELECT delivery_id, application_id FROM leases WHERE destination = 'webhook')", '$4', '$5', {
           holder: '$12',
           slots: slotsGiven,
         })}
       ), spent AS (
         -- Rows with nothing left in flight, unless one is a worker's latest of an application (it
         -- says the slots the worker holds there) and this claim records no newer one. A row lists
         -- applications other claims serve, so two claims may go for the same rows: SKIP LOCKED,
         -- so neither waits (nor deadlocks), and a row left is deleted by a later claim.
         DELETE FROM endpoint_claims c
          WHERE (c.lease_token, c.throttled) IN (
            SELECT e.lease_token, e.throttled FROM endpoint_claims e
             WHERE (e.lease_token, e.throttled) IN (
               SELECT s.lease_token, s.throttled FROM claims s GROUP BY s.lease_token, s.throttled
               HAVING NOT bool_or(s.live_any)
                  AND NOT bool_or(s.latest AND NOT (s.holder = $12 AND s.application_id IN (SELECT application_id FROM leases WHERE destination = 'webhook'))))
             FOR UPDATE SKIP LOCKED)
       ), run_out AS (
         -- Rows whose lease is over, whatever they list (the lease_until index), as above.
         DELETE FROM endpoint_claims c
          WHERE (c.lease_token, c.throttled) IN (
            SELECT e.lease_token, e.throttled FROM endpoint_claims e WHERE e.lease_until < $1 FOR UPDATE SKIP LOCKED)
       ), claimed AS MATERIALIZED (
         -- By key, and read once (materialized): inlined into the query below, a generic plan
         -- cached while deliveries was small ran a scan of it once per lease and per fitting row
         -- (70 ms a claim with 10,000 deliveries). Each carries its place in the round-robin,
         -- numbered as picked numbered it (the operator's notices apart, by due time).
         SELECT d.*, l.ordering_key AS queue_ordering_key, l.due_at AS claim_due_at,
                row_number() OVER (PARTITION BY l.destination, CASE WHEN l.destination = 'webhook' THEN l.application_id END
                                   ORDER BY l.due_at, l.delivery_id) AS claim_n
           FROM leases l JOIN deliveries d ON d.application_id = l.application_id AND d.id = l.delivery_id
       ), walk AS (
         -- The earliest of: applications whose first entry is still to come, the next entry of
         -- each one served (behind its leased or claimed ones), and the operator's notices.
         SELECT LEAST((SELECT min(head_due_at) FROM visited WHERE head_due_at > $1),
                      (SELECT min(n.due_at) FROM served s CROSS JOIN LATERAL (
                         SELECT q.due_at FROM delivery_queue q
                          WHERE q.application_id = s.application_id AND ${ready('q')} AND q.due_at > $1
                          ORDER BY q.due_at LIMIT 1) n),
                      (SELECT min(due_at) FROM delivery_queue WHERE destination = 'operational' AND due_at > $1)) AS next_claimable_at,
                (SELECT application_id FROM visited ORDER BY visited DESC LIMIT 1) AS last_visited,
                -- The publishes it saw: their NOTIFY is no news to the worker (NewDeliveries).
                pg_current_snapshot()::text AS snapshot,
                (SELECT count(*) FROM forward) >= $11 OR EXISTS (SELECT 1 FROM picked WHERE cut) AS more_applications,
                -- Applications with due work whose claim lock another claim held.
                (SELECT count(*) FROM due) > (SELECT count(*) FROM served) AS locked_out,
                -- An application served with due work its endpoint had no room for (or took all its room).
                EXISTS (SELECT 1 FROM room r WHERE NOT r.throttled AND r.room < r.min_room)
                  OR EXISTS (SELECT 1 FROM picked p WHERE NOT p.throttled AND p.took_room) AS left_for_room,
                -- What fitted but was not leased (a throttled webhook's) goes on to the throttle's
                -- statement. Named as an array (a hashed NOT IN), not joined: the CTEs have no index,
                -- and a join of fitting to what was claimed ran as a nested loop, n² rows for n claimed.
                (SELECT array_agg(f.id ORDER BY f.n, f.due_at, f.id) FROM fitting f
                  WHERE f.id NOT IN (SELECT delivery_id FROM leases)) AS throttled_ids
       )
       SELECT c.id, c.attempt_count, c.manual_attempt, c.ignores_subscription, c.queue_ordering_key AS ordering_key,
              CASE WHEN c.destination = 'webhook' THEN ${slotsGiven('c.application_id')} END AS endpoint_slots,
              walk.next_claimable_at, walk.last_visited, walk.more_applications, walk.left_for_room, walk.locked_out, walk.throttled_ids,
              walk.snapshot,
              ${contextColumns('c')}
         FROM walk
         LEFT JOIN claimed c ON true
         ${contextJoins('c')}
        -- Round-robin, as picked: every application's first, then every second.
        ORDER BY c.claim_n, c.claim_due_at, c.id`;

const CLAIM = preparedStatement('claim', CLAIM_SQL);
/** The tables the claim reads, whose planner statistics refreshPlannerStatistics refreshes. */
const CLAIM_TABLES = ['delivery_queue', 'deliveries', 'events'] as const;
export type ClaimTable = (typeof CLAIM_TABLES)[number];

/**
 * Records attempts and moves their deliveries on (DeliveryQueueRepository.finish), the
 * webhooks' failure streaks, the attempts for the applications' statistics (one pending row,
 * unless HERALD_DELIVERY_STATISTICS is off; statistics/delivery-statistics.sql.ts) and, for
 * deliveries that failed for good, `delivery.exhausted` notices in one statement. $1… are arrays,
 * one element per attempt (FinishItem).
 *
 * The lease is checked on the queue row: a delivery that is done leaves the queue (`dequeued`),
 * one with a retry to come is due again at it (`rescheduled`); only those, whose worker still
 * held them, have their `deliveries` row updated, once, with columns no index names (a HOT
 * update, given the room the table's fillfactor leaves on each page). The queue rows are named
 * as an array besides the join (queueRowsIn). A prepared statement: planning it each time cost
 * PostgreSQL more than running it (2.2 ms a finish against 1.5; bench/README.md, "Issue 20, fourth
 * sitting"). A generic plan made while the tables are small reads `delivery_queue` and
 * `deliveries` whole (shown: 50,000 rows read to finish 3), and PostgreSQL keeps it until an
 * ANALYZE of one of them: the worker ANALYZEs the queue every ten seconds while it claims
 * (PlannerStatisticsPolicy), which replaces it. bench/ claim-scale asserts the generic plan with a
 * large queue and history. Exported for that.
 */
const finishSql = (statistics: boolean) => `WITH input AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[],
                              $6::timestamptz[], $7::int[], $8::text[], $9::int[], $10::text[], $11::text[], $12::text[],
                              $13::text[], $14::text[], $15::boolean[])
           AS t(delivery_id, token, status, next_attempt_at, finished_at, started_at, duration_ms, url,
                response_status, response_excerpt, error, request_headers, notice_event_id, notice_delivery_id, manual_attempt)
       ), dequeued AS (
         DELETE FROM delivery_queue q USING input i
          WHERE ${queueRowsIn('q', '$1::text[]')} AND q.delivery_id = i.delivery_id AND q.lease_token = i.token AND i.status <> 'pending'
         RETURNING q.delivery_id, q.application_id, q.ordering_key
       ), ${unblockNext('dequeued')}, rescheduled AS (
         UPDATE delivery_queue q SET due_at = i.next_attempt_at, lease_token = NULL, lease_until = NULL
           FROM input i
          WHERE ${queueRowsIn('q', '$1::text[]')} AND q.delivery_id = i.delivery_id AND q.lease_token = i.token AND i.status = 'pending'
         RETURNING q.delivery_id, q.application_id
       ), finished AS (
         -- The deliveries whose queue entries this finish took or moved on, by their key (the
         -- queue entry names the application).
         UPDATE deliveries d
            SET status = i.status::delivery_status, attempt_count = d.attempt_count + 1, next_attempt_at = i.next_attempt_at,
                manual_attempt = false, updated_at = i.finished_at
           FROM (SELECT delivery_id, application_id FROM dequeued UNION ALL SELECT delivery_id, application_id FROM rescheduled) x
           JOIN input i ON i.delivery_id = x.delivery_id
          WHERE d.application_id = x.application_id AND d.id = x.delivery_id
         RETURNING d.id, d.attempt_count, d.application_id, d.event_id, d.event_type, d.destination
       ), streaks AS (
         -- Each webhook's failure streak (PRODUCT.md §10, auto-disable): a success in the batch
         -- ends it; failures extend it from the first one.
         SELECT f.application_id,
                max(i.started_at) FILTER (WHERE i.status = 'succeeded') AS succeeded_at,
                min(i.started_at) FILTER (WHERE i.status <> 'succeeded') AS first_failed_at,
                count(*) FILTER (WHERE i.status <> 'succeeded') AS failures
           FROM finished f JOIN input i ON i.delivery_id = f.id
          WHERE f.destination = 'webhook'
          GROUP BY f.application_id
       ), health AS (
         -- Written only when it changes: a streak that starts, grows or ends, or a last success
         -- that moves on by a second or more. Rewriting every webhook row of the batch on every
         -- finish cost a row version per batch and application, and made two workers' finishes
         -- wait on each other's row locks (bench/ storage).
         UPDATE webhooks w
            SET last_success_at = COALESCE(GREATEST(w.last_success_at, s.succeeded_at), w.last_success_at),
                failing_since = CASE WHEN s.succeeded_at IS NOT NULL THEN NULL ELSE COALESCE(w.failing_since, s.first_failed_at) END,
                consecutive_failures = CASE WHEN s.succeeded_at IS NOT NULL THEN 0 ELSE w.consecutive_failures + s.failures END
           FROM streaks s
          WHERE w.application_id = s.application_id
            AND (s.failures > 0
                 OR w.consecutive_failures <> 0 OR w.failing_since IS NOT NULL
                 OR w.last_success_at IS NULL OR s.succeeded_at >= w.last_success_at + interval '1 second')
       ), exhausted AS (
         -- delivery.exhausted for the operational webhook (PRODUCT.md §10), when there is one.
         SELECT i.notice_event_id, i.notice_delivery_id, i.finished_at, f.application_id,
                json_build_object('application_id', f.application_id, 'delivery_id', f.id, 'event_id', f.event_id,
                                  'event', f.event_type, 'attempts', f.attempt_count,
                                  'reason', COALESCE(i.error, 'http_' || i.response_status))::text AS payload
           FROM finished f JOIN input i ON i.delivery_id = f.id
          WHERE i.notice_event_id IS NOT NULL AND f.destination = 'webhook' AND EXISTS (SELECT 1 FROM operational_webhook)
       ), exhausted_event AS (
         INSERT INTO events (id, application_id, event_type, payload, created_at)
         SELECT notice_event_id, application_id, 'delivery.exhausted', payload, finished_at FROM exhausted
       ), exhausted_delivery AS (
         INSERT INTO deliveries (id, event_id, application_id, event_type, status, destination, ignores_subscription,
                                 next_attempt_at, created_at, updated_at)
         SELECT notice_delivery_id, notice_event_id, application_id, 'delivery.exhausted', 'pending', 'operational', true,
                finished_at, finished_at, finished_at
           FROM exhausted
         RETURNING ${ENQUEUED_COLUMNS}
       ), exhausted_queued AS (
         ${enqueue('exhausted_delivery')}
       )${statistics ? `, ${recordPendingStatistics('finished', 'input')}` : ''}
       INSERT INTO delivery_attempts (delivery_id, number, started_at, duration_ms, url, response_status,
                                      response_excerpt, error, next_attempt_at, request_headers)
       SELECT f.id, f.attempt_count, i.started_at, i.duration_ms, i.url, i.response_status,
              i.response_excerpt, i.error, i.next_attempt_at, i.request_headers::json
         FROM finished f JOIN input i ON i.delivery_id = f.id
       RETURNING delivery_id`;

export const FINISH_SQL = finishSql(true);
/** The finish with HERALD_DELIVERY_STATISTICS off: the same statement without the statistics' CTE. */
export const FINISH_WITHOUT_STATISTICS_SQL = finishSql(false);
const FINISH = preparedStatement('finish', FINISH_SQL);
const FINISH_WITHOUT_STATISTICS = preparedStatement('finish_without_statistics', FINISH_WITHOUT_STATISTICS_SQL);
/** Finish statements in flight at once, at most (DeliveryQueueRepository.finishes). */
const FINISH_LANES = 2;
/**
 * While outcomes come faster than a lane's finishes (the last one carried two or more), a finish
 * with fewer than 12 outcomes waits up to 8 ms for more (Batcher, `gather`). A lease that ends
 * later costs no throughput (the endpoint slots count attempts, and the worker's held deliveries go
 * on meanwhile); under a flood to one endpoint the finishes had averaged 4.5 outcomes, 0.22 commits
 * per delivery, and with 8 outcomes and 5 ms 0.21-0.23 (bench/README.md, "Issue 23, endpoint
 * slots"). A trickle of outcomes, each finished
 * alone, never waits: it would only move its commit into the next delivery's way.
 */
const FINISH_GATHER = { items: 12, ms: 8 };

/**
 * The worker's side of the queue: a claim is a lease on the delivery's queue row (a token and
 * an expiry; the delivery reads as `sending` meanwhile). Finishing, cancelling and releasing are guarded by the token, so a worker whose lease
 * ran out and was taken over cannot overwrite the new owner's work. No transaction is ever held
 * across an HTTP call. These run once per attempt, so they go straight to the pool (PgPool),
 * never through Prisma.
 */
@Injectable()
export class DeliveryQueueRepository {
  /**
   * The finisher: FINISH_LANES batchers, so that many finish statements can be in flight at once
   * while the worker's slots go on sending. An application's finishes always take the same lane:
   * two statements in flight never touch the same application's rows (its webhook's health, its
   * keys' ordering lock), so they cannot wait on, or deadlock with, each other.
   */
  private readonly finishes = Array.from(
    { length: FINISH_LANES },
    () => new Batcher<FinishItem, boolean, ClaimRider>((items, rider) => this.finishMany(items, rider), 200, FINISH_GATHER),
  );
  private readonly finishSql: PreparedStatement;
  /** Webhook configurations by version, for the claimed deliveries' contexts. */
  private readonly webhookConfigs = new WebhookConfigs();
  /** Finish statements that recorded at least one attempt, since start: whether there may be statistics to fold. */
  finishesRecorded = 0;

  /** Without a configuration (tests, the bench), statistics are written, as by default. */
  constructor(
    private readonly pg: PgPool,
    @Optional() @Inject(HERALD_CONFIG) config?: HeraldConfig,
  ) {
    this.finishSql = config?.delivery.statistics === false ? FINISH_WITHOUT_STATISTICS : FINISH;
  }

  /**
   * The connection the claims run on, the same for every claim of the process
   * (PgPool.dedicatedSql), whose prepared statements are planned once for any values (until an
   * ANALYZE of a table they read replaces the plan). Left to choose, PostgreSQL planned the claim
   * afresh for a tenth to a quarter of its runs (36–104 of about 400 with single publishes), 3.4 ms
   * of planning each against 2.2 ms of running it (bench/README.md, "Issue 20, eighth sitting").
   * The claim's plan does not turn on its values: every read of it is an index probe by key or by
   * an array of keys, or an index-ordered range read up to a LIMIT (its plan test runs it
   * generic). On this connection run only the claim and what completes it (contexts, the
   * throttle's statement, keyed by arrays); forced for the whole worker, the setting also reached
   * retention's `LIMIT $1`. A claim riding on a finish runs in the finish's transaction, on the
   * main pool, planned as PostgreSQL chooses.
   */
  private claimsSql(): SqlQuery {
    return this.pg.dedicatedSql('claims', { genericPlans: true });
  }

  /**
   * Claims up to `limit` deliveries that are due, or whose lease expired (their worker died),
   * oldest first, skipping rows other workers are claiming and hosts this worker has no room for.
   * Deliveries of throttled webhooks among them go through the throttle (`claimThrottled`): held
   * until their slot, or left waiting for a later one. Webhooks without a throttle pay nothing
   * for it: the second statement runs only when a throttled delivery was among the due ones.
   * Notices to the operational webhook are never throttled (the throttle is the customer's).
   */
  claim(options: ClaimOptions): Promise<ClaimBatch> {
    return this.claimWith(this.claimsSql(), options);
  }

  /**
   * A claim as claim() makes it, in the same transaction as the next finish statement of
   * `applicationId`'s lane and after it (the finish in flight, if any, commits first): the leases
   * that finish ends are room the claim can use at once, and the two share one commit. Under a
   * flood to one endpoint, a claim of its own after every few finishes was a third of the
   * commits per delivery (bench/ storage, isolation). `options` is read when the claim is about
   * to run, so it sees the worker's slots as they are then; null there means no claim after all
   * (the promise resolves null). When the claim fails, the finish is written again on its own and
   * the promise rejects: the worker claims on its own instead. With nothing waiting in the lane,
   * the claim runs alone, or, `withNextFinish`, waits for the next outcome submitted to it (the
   * caller knows whether one is coming). `withdraw` calls off a claim that has not been taken up
   * yet (it resolves null); it is false once the claim is on its way.
   */
  claimAfterFinishing(applicationId: number, options: () => ClaimOptions | null, { withNextFinish = false } = {}): RidingClaim {
    let withdraw = () => false;
    const claimed = new Promise<ClaimBatch | null>((resolve, reject) => {
      const takeBack = this.laneOf(applicationId).ride({ options, resolve, reject }, { withItems: withNextFinish });
      withdraw = () => {
        const withdrawn = takeBack();
        if (withdrawn) resolve(null);
        return withdrawn;
      };
    });
    return { claimed, withdraw };
  }

  private async claimWith(sql: SqlQuery, options: ClaimOptions): Promise<ClaimBatch> {
    const minHostRoom = options.minHostRoom ?? 1;
    const perSlot = options.deliveriesPerSlot ?? 1;
    const perSlotOf = options.deliveriesPerSlotOf ?? new Map<number, number>();
    const mostPerSlot = Math.max(perSlot, ...perSlotOf.values());
    const hosts = [...options.hostsInFlight];
    const busyHosts = hosts.filter(([, count]) => options.hostCap * mostPerSlot - count < minHostRoom).map(([host]) => host);
    const heldPer = options.heldPerApplication ?? new Map<number, number>();
    const applications = [...new Set([...heldPer.keys(), ...perSlotOf.keys()])];
    const rows = await sql<
      ClaimedRow &
        ContextRow & {
          throttled_ids: string[] | null;
          endpoint_slots: number | null;
          next_claimable_at: Date | null;
          last_visited: number | null;
          more_applications: boolean;
          left_for_room: boolean;
          locked_out: boolean;
          snapshot: string | null;
        }
    >(CLAIM, [
      options.now,
      busyHosts,
      options.limit,
      options.token,
      options.leaseUntil,
      options.hostCap,
      hosts.map(([host]) => host),
      hosts.map(([, count]) => count),
      options.endpointCap,
      options.afterApplicationId ?? 0,
      options.applicationsPerClaim ?? APPLICATIONS_PER_CLAIM,
      options.holder ?? options.token,
      applications,
      applications.map((applicationId) => heldPer.get(applicationId) ?? 0),
      perSlot,
      applications.map((applicationId) => perSlotOf.get(applicationId) ?? perSlot),
      mostPerSlot,
    ]);
    const walk = {
      nextClaimableAt: rows[0]?.next_claimable_at ?? null,
      lastVisited: Number(rows[0]?.last_visited ?? 0),
      moreApplications: rows[0]?.more_applications ?? false,
      leftForRoom: rows[0]?.left_for_room ?? false,
      lockedOut: rows[0]?.locked_out ?? false,
      snapshot: rows[0]?.snapshot ?? null,
    };
    const found = rows.filter((row) => row.id !== null);
    const endpointSlots = new Map(
      found.flatMap((row) => (row.endpoint_slots === null ? [] : [[Number(row.application_id), Number(row.endpoint_slots)] as const])),
    );
    const leased = found.filter((row) => row.event_id !== null);
    const contexts = await this.contextsOf(sql, leased, options.now);
    const deliveries = leased.map((row, i) => toClaimedDelivery(row, null, contexts[i]));
    const throttledIds = rows[0]?.throttled_ids ?? [];
    if (throttledIds.length === 0) return { deliveries, waiting: 0, endpointSlots, databaseTimeMs: null, ...walk };
    const throttled = await this.claimThrottled(sql, throttledIds, options);
    return {
      deliveries: [...deliveries, ...throttled.held],
      waiting: throttled.waiting,
      endpointSlots,
      databaseTimeMs: throttled.databaseTimeMs,
      ...walk,
      // Reserving later slots moved some deliveries' due times: the earliest of those counts too.
      nextClaimableAt: earliest(walk.nextClaimableAt, throttled.nextDueAt),
    };
  }

  /**
   * Refreshes the planner's statistics of the tables the claim reads. The claim is a prepared
   * statement: its cached plan was made for the table sizes PostgreSQL last knew, and a queue
   * that was empty then (a fresh database, or a quiet spell) is planned with sequential scans. A
   * burst of thousands of deliveries then makes each claim read the whole queue, for each
   * application (600–700 ms a claim with 16,000 queued, measured), until autovacuum's next
   * ANALYZE, which may be a minute away or more on a busy server. ANALYZE here invalidates
   * the cached plans at once. The worker calls it when a claim was slow (DeliveryLoop), and for
   * the queue alone as a fresh database fills and every ten seconds while it claims, which also
   * replaces the finish's generic plan (PlannerStatisticsPolicy).
   *
   * A table analyzed (by anyone: another worker, autovacuum) within `unlessWithinMs` is left as
   * it is, so N workers do not analyze it N times (analyzeUnlessRecent).
   */
  async refreshPlannerStatistics(
    tables: readonly ClaimTable[] = CLAIM_TABLES,
    { unlessWithinMs = 0 }: { unlessWithinMs?: number } = {},
  ): Promise<{ analyzed: ClaimTable[]; notices: string[] }> {
    // Names from CLAIM_TABLES only: nothing a caller wrote reaches the statement.
    return analyzeUnlessRecent(
      this.pg,
      CLAIM_TABLES.filter((table) => tables.includes(table)),
      unlessWithinMs,
    );
  }

  /** The throttle's part of a claim (throttle.sql.ts): takes each delivery's slot in PostgreSQL. */
  private async claimThrottled(
    sql: SqlQuery,
    ids: string[],
    options: ClaimOptions,
  ): Promise<{ held: ClaimedDelivery[]; waiting: number; databaseTimeMs: number | null; nextDueAt: Date | null }> {
    const hosts = [...options.hostsInFlight];
    const rows = await sql<ClaimedRow & { hold: boolean; slot: string; slot_ms: string; database_ms: string; next_attempt_at: Date }>(
      CLAIM_THROTTLED_SQL,
      [
        options.now,
        ids,
        options.token,
        options.leaseUntil,
        hosts.map(([host]) => host),
        hosts.map(([, count]) => count),
        options.hostCap,
        options.endpointCap,
      ],
    );
    const heldRows = rows.filter((row) => row.hold);
    const contexts = new Map(
      (
        await this.loadContexts(
          sql,
          heldRows.map((row) => row.id),
          options.now,
        )
      ).map((c) => [c.deliveryId, c]),
    );
    const held = heldRows
      .filter((row) => contexts.has(row.id))
      .map((row) => toClaimedDelivery(row, { slot: row.slot, slotMs: Number(row.slot_ms) }, contexts.get(row.id)!));
    const databaseTimeMs = rows.length > 0 ? Math.max(...rows.map((row) => Number(row.database_ms))) : null;
    const nextDueAt = rows.filter((row) => !row.hold).reduce<Date | null>((soonest, row) => earliest(soonest, row.next_attempt_at), null);
    return { held, waiting: rows.length - heldRows.length, databaseTimeMs, nextDueAt };
  }

  /**
   * Hands a held throttled delivery back with its slot kept (this worker is at its cap for the
   * host, or shutting down): whichever worker claims it next sends it in that slot if it has
   * not passed, or takes a new one.
   */
  async releaseKeepingSlot(deliveryId: string, token: string, slot: string, dueAt: Date): Promise<boolean> {
    const rows = await this.pg.sql(
      `UPDATE delivery_queue SET due_at = $1, throttle_slot_at = $4::timestamptz, slot_reserved_at = $1, lease_token = NULL, lease_until = NULL
        WHERE delivery_id = $2 AND lease_token = $3 RETURNING delivery_id`,
      [dueAt, deliveryId, token, slot],
    );
    return rows.length > 0;
  }

  /** The contexts of held throttled deliveries (the main claim reads its own as it claims). */
  private async loadContexts(sql: SqlQuery, deliveryIds: string[], now: Date): Promise<AttemptContextRecord[]> {
    if (deliveryIds.length === 0) return [];
    const rows = await sql<ContextRow>(LOAD_CONTEXTS, [deliveryIds]);
    return this.contextsOf(
      sql,
      rows.filter((row) => row.event_id !== null),
      now,
    );
  }

  /** The contexts of claimed rows, their webhooks' configurations from WebhookConfigs (read on `sql` when not held yet). */
  private async contextsOf(sql: SqlQuery, rows: ContextRow[], now: Date): Promise<AttemptContextRecord[]> {
    const wanted = rows.flatMap((row) =>
      row.destination === 'webhook' && row.config_version !== null
        ? [{ applicationId: Number(row.application_id), version: row.config_version }]
        : [],
    );
    if (wanted.length > 0) await this.webhookConfigs.load(sql, wanted);
    return rows.map((row) =>
      row.destination === 'operational'
        ? toOperationalContext(row)
        : toWebhookContext(
            row,
            row.config_version === null ? undefined : this.webhookConfigs.get(Number(row.application_id), row.config_version),
            now.getTime(),
          ),
    );
  }

  /**
   * Records the attempt and moves the delivery on (succeeded, failed, or pending for a retry).
   * False when the lease was lost: another worker owns the delivery now and nothing is written.
   * Attempts finishing together are recorded in one statement (see Batcher). With
   * `exhaustedNotice`, a delivery that ends `failed` queues `delivery.exhausted` for the
   * operational webhook in that statement too.
   */
  async finish(
    delivery: FinishRef,
    token: string,
    outcome: FinishOutcome,
    attempt: NewAttemptRecord,
    exhaustedNotice: ExhaustedNoticeIds | null = null,
  ): Promise<boolean> {
    return this.laneOf(delivery.applicationId).submit({ delivery, token, outcome, attempt, exhaustedNotice });
  }

  private laneOf(applicationId: number): Batcher<FinishItem, boolean, ClaimRider> {
    return this.finishes[Math.abs(applicationId % FINISH_LANES)];
  }

  /**
   * One statement for the batch; when keyed deliveries are in it, in a transaction that first
   * takes their applications' ordering lock (queue.sql.ts), as the statement may unblock the next
   * delivery of their keys. A claim riding on the batch (claimAfterFinishing) runs after it in
   * the same transaction, or alone when the batch is empty.
   */
  private async finishMany(items: FinishItem[], rider: ClaimRider | null): Promise<boolean[]> {
    if (rider === null) return this.finishAlone(items);
    if (items.length === 0) {
      await settleClaim(rider, (options) => this.claimWith(this.claimsSql(), options));
      return [];
    }
    try {
      const [rows, claimed] = await this.pg.transaction(async (sql) => {
        const finished = await this.finishIn(sql, items);
        const options = rider.options();
        return [finished, options === null ? null : await this.claimWith(sql, options)] as const;
      });
      rider.resolve(claimed);
      return this.recordedOf(items, rows);
    } catch (error) {
      // Whichever failed took the other with it: the outcomes are written again on their own,
      // and the worker claims on its own.
      rider.reject(error);
      return this.finishAlone(items);
    }
  }

  private async finishAlone(items: FinishItem[]): Promise<boolean[]> {
    const keyed = items.some((i) => i.delivery.orderingKey !== null);
    const rows = keyed ? await this.pg.transaction((sql) => this.finishIn(sql, items)) : await this.finishStatement(this.pg.sql, items);
    return this.recordedOf(items, rows);
  }

  /** The finish statement on `sql`, a transaction's when keyed deliveries are among the items (their ordering lock first). */
  private async finishIn(sql: SqlQuery, items: FinishItem[]): Promise<{ delivery_id: string }[]> {
    const ordered = items.filter((i) => i.delivery.orderingKey !== null).map((i) => i.delivery.applicationId);
    if (ordered.length > 0) await sql(ORDERING_LOCK_SQL, [ordered]);
    return this.finishStatement(sql, items);
  }

  private recordedOf(items: FinishItem[], rows: { delivery_id: string }[]): boolean[] {
    const recorded = new Set(rows.map((row) => row.delivery_id));
    if (recorded.size > 0) this.finishesRecorded++;
    return items.map((item) => recorded.has(item.delivery.id));
  }

  private finishStatement(sql: SqlQuery, items: FinishItem[]): Promise<{ delivery_id: string }[]> {
    return sql<{ delivery_id: string }>(this.finishSql, [
      items.map((i) => i.delivery.id),
      items.map((i) => i.token),
      items.map((i) => i.outcome.status),
      items.map((i) => i.outcome.nextAttemptAt),
      items.map((i) => i.outcome.now),
      items.map((i) => i.attempt.startedAt),
      items.map((i) => i.attempt.durationMs),
      items.map((i) => i.attempt.url),
      items.map((i) => i.attempt.responseStatus),
      items.map((i) => i.attempt.responseExcerpt),
      items.map((i) => i.attempt.error),
      // As text, cast to json in SQL: the header order the customer wrote is kept.
      items.map((i) => (i.attempt.requestHeaders === null ? null : JSON.stringify(i.attempt.requestHeaders))),
      items.map((i) => i.exhaustedNotice?.eventId ?? null),
      items.map((i) => i.exhaustedNotice?.deliveryId ?? null),
      items.map((i) => i.delivery.manualAttempt),
    ]);
  }

  /** Ends a claimed delivery without an attempt: its webhook or subscription is gone or inactive. */
  async cancelClaimed(delivery: ClaimRef, token: string, now: Date): Promise<boolean> {
    const cancel = (sql: SqlQuery) =>
      sql(cancelDequeued(`DELETE FROM delivery_queue WHERE delivery_id = $2 AND lease_token = $3 RETURNING ${DEQUEUED_COLUMNS}`, '$1'), [
        now,
        delivery.id,
        token,
      ]);
    const rows =
      delivery.orderingKey === null
        ? await cancel(this.pg.sql)
        : await this.pg.transaction(async (sql) => {
            await sql(ORDERING_LOCK_SQL, [[delivery.applicationId]]);
            return cancel(sql);
          });
    return rows.length > 0;
  }

  /** Parks a claimed delivery without an attempt: its webhook is disabled (PRODUCT.md §10). Enabling resumes it. */
  async pauseClaimed(deliveryId: string, token: string, now: Date): Promise<boolean> {
    const rows = await this.pg.sql(
      `WITH parked AS (
         UPDATE delivery_queue SET paused = true, lease_token = NULL, lease_until = NULL
          WHERE delivery_id = $2 AND lease_token = $3 RETURNING delivery_id, application_id
       )
       UPDATE deliveries d SET status = 'paused', updated_at = $1
         FROM parked WHERE d.application_id = parked.application_id AND d.id = parked.delivery_id RETURNING d.id`,
      [now, deliveryId, token],
    );
    return rows.length > 0;
  }

  /** Hands a claimed delivery back untouched (a worker shutting down), due at `dueAt`. */
  async release(deliveryId: string, token: string, dueAt: Date): Promise<boolean> {
    const rows = await this.pg.sql(
      `UPDATE delivery_queue SET due_at = $1, lease_token = NULL, lease_until = NULL
        WHERE delivery_id = $2 AND lease_token = $3 RETURNING delivery_id`,
      [dueAt, deliveryId, token],
    );
    return rows.length > 0;
  }

  /**
   * The queue at `now`, for /metrics: deliveries due and not yet claimed, scheduled for a later
   * retry, claimed by a worker and paused; how long the oldest due one has waited (0 when
   * none); and webhooks by state. Reads only unfinished rows, through the queue's partial indexes.
   */
  async backlog(now: Date): Promise<DeliveryBacklog> {
    const [row] = await this.pg.sql<{
      due: string;
      scheduled: string;
      sending: string;
      paused: string;
      oldest_due_at: Date | null;
      active_webhooks: string;
      disabled_webhooks: string;
    }>(
      // The queue holds only unfinished deliveries: one pass over it, never over the history.
      `SELECT count(*) FILTER (WHERE NOT paused AND due_at <= $1 AND NOT ${leased('q', '$1')}) AS due,
              count(*) FILTER (WHERE NOT paused AND due_at > $1 AND NOT ${leased('q', '$1')}) AS scheduled,
              count(*) FILTER (WHERE ${leased('q', '$1')}) AS sending,
              count(*) FILTER (WHERE paused) AS paused,
              min(due_at) FILTER (WHERE NOT paused AND NOT ${leased('q', '$1')}) AS oldest_due_at,
              (SELECT count(*) FROM webhooks WHERE state = 'active') AS active_webhooks,
              (SELECT count(*) FROM webhooks WHERE state = 'disabled') AS disabled_webhooks
         FROM delivery_queue q`,
      [now],
    );
    const oldestDueAt = row?.oldest_due_at ?? null;
    return {
      due: Number(row?.due ?? 0),
      scheduled: Number(row?.scheduled ?? 0),
      sending: Number(row?.sending ?? 0),
      paused: Number(row?.paused ?? 0),
      webhooks: { active: Number(row?.active_webhooks ?? 0), disabled: Number(row?.disabled_webhooks ?? 0) },
      oldestDueSeconds: oldestDueAt && oldestDueAt <= now ? (now.getTime() - oldestDueAt.getTime()) / 1000 : 0,
    };
  }
}

function earliest(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a <= b ? a : b;
}

function eventOf(row: ContextRow): AttemptContextRecord['event'] {
  return {
    id: row.event_id,
    type: row.event_type,
    applicationId: Number(row.application_id),
    createdAt: row.event_created_at,
    payload: row.payload,
    orderingKey: row.event_ordering_key,
    traceContext: row.event_trace_context,
  };
}

/** `config` undefined: the webhook is gone (removed since the publish, or since the claim). */
function toWebhookContext(row: ContextRow, config: WebhookConfig | undefined, nowMs: number): AttemptContextRecord {
  return {
    deliveryId: row.delivery_id,
    destination: 'webhook',
    event: eventOf(row),
    webhook: config?.webhook ?? null,
    destinationHost: config === undefined ? '' : (row.destination_host ?? ''),
    webhookActive: row.webhook_state !== 'disabled',
    subscription: row.active === null ? null : { ensureDelivery: Boolean(row.ensure_delivery), active: row.active },
    secrets: config === undefined ? [] : WebhookConfigs.secretsAt(config, nowMs),
  };
}

/**
 * A notice for the operator's endpoint: its URL, headers and secret, the default retry policy
 * (PRODUCT.md §10), delivered at least once (as `ensure_delivery`) and never paused (the
 * application's webhook state is not its business). No endpoint (it was removed): no webhook,
 * and the attempt cancels the delivery.
 */
function toOperationalContext(row: ContextRow): AttemptContextRecord {
  const headers = typeof row.operational_headers === 'string' ? JSON.parse(row.operational_headers) : row.operational_headers;
  return {
    deliveryId: row.delivery_id,
    destination: 'operational',
    event: eventOf(row),
    webhook:
      row.operational_url === null
        ? null
        : {
            url: row.operational_url,
            retryEnabled: 1,
            retryPolicy: { ...DEFAULT_RETRY_POLICY },
            headers: (headers ?? {}) as Record<string, string>,
          },
    destinationHost: row.operational_url === null ? '' : (row.destination_host ?? ''),
    webhookActive: true,
    subscription: { ensureDelivery: true, active: true },
    secrets: row.operational_secret === null ? [] : [row.operational_secret],
  };
}
