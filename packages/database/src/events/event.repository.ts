import { IDEMPOTENCY_WINDOW_HOURS, OPERATIONAL_EVENT_TYPES } from '@herald/core';
import { Injectable, Logger } from '@nestjs/common';
import { classifyDatabaseError, isDataError } from '../database-errors';
import { Batcher } from '../batching/batcher';
import { analyzeUnlessRecent, GrowthMarks } from '../housekeeping/planner-statistics';
import { DELIVERY_CHANNEL } from '../notifications/delivery-channel';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { PgPool, preparedStatement, SqlQuery } from '../pg-pool';
import { ApplicationScope } from '../records';
import { ENQUEUED_COLUMNS, enqueue, ORDERING_LOCK_SQL } from '../queue/queue.sql';

export interface NewEvent {
  id: string;
  eventType: string;
  /** Compact JSON text; stored and sent as is. */
  payload: string;
  createdAt: Date;
  /** The key it was published under; null when none was given. */
  idempotencyKey: string | null;
  /** Its ordering key (PRODUCT.md §13); null when none was given. */
  orderingKey: string | null;
  /** Used if the event is to be delivered. */
  deliveryId: string;
  /** Test pings are delivered whether or not the application subscribes to their event. */
  ignoresSubscription: boolean;
  /** The subscription's filter refused the payload (the caller's decision): the event is stored without a delivery. */
  filteredOut: boolean;
  /**
   * The publish span's trace context, for its attempts' spans (PRODUCT.md §16); null, and
   * nothing written for it, while traces are off.
   */
  traceContext: string | null;
}

export interface PublishedEventRecord {
  eventId: string;
  eventType: string;
  deliveryIds: string[];
}

/** An idempotency key to take with a publish, and what it is to remember of the request. */
export interface IdempotencyClaim {
  key: string;
  requestHash: string;
}

/**
 * What storing a publish did. `key_taken`: its key was taken before (by an earlier publish, or
 * by another in the same statement) and nothing was stored; `first` is what that publish
 * stored and the request it came with: deciding what to answer is the caller's (core's
 * repeatedKeyOutcome). `unknown_event_type`: the catalogue has no such event type.
 */
export type PublishResult =
  | { kind: 'stored'; record: PublishedEventRecord }
  | { kind: 'key_taken'; first: { requestHash: string; record: PublishedEventRecord } }
  | { kind: 'unknown_event_type' };

/** What storing a batch did: every item's result, or the items whose event type is unknown (nothing stored). */
export type BatchPublishResult =
  | { kind: 'stored'; results: Exclude<PublishResult, { kind: 'unknown_event_type' }>[] }
  | { kind: 'unknown_event_types'; indexes: number[] };

interface PublishEntry {
  applicationId: number;
  event: NewEvent;
  idempotency: IdempotencyClaim | null;
}

/**
 * A new delivery's status, in a statement that joins the application's webhook as `w`: paused
 * while the webhook is disabled (PRODUCT.md §10: nothing is dropped), else pending.
 */
const INITIAL_STATUS = `(CASE WHEN w.state = 'disabled' THEN 'paused' ELSE 'pending' END)::delivery_status`;

/**
 * Publishes (one per array element) in one statement and one commit. Each idempotency key is
 * taken first (`taken`): a key still held from the last IDEMPOTENCY_WINDOW_HOURS keeps its row
 * and the publish under it stores nothing; an expired one is taken over. Then each event that
 * has no key or took its key is stored, with its delivery when the application has a webhook
 * and an active subscription to it whose filter the caller found the payload to pass (or for a
 * test ping): the event, its key and its delivery
 * commit together, or none does. The answer has one row per stored event. A key can be taken
 * only once per statement (ON CONFLICT cannot touch a row twice): the caller sends each
 * (application, key) once.
 * $1 ids, $2 applications, $3 types, $4 payloads, $5 times, $6 delivery ids, $7 ignores
 * subscription, $8 idempotency keys, $9 request hashes, $10 ordering keys, $11 filtered out,
 * $12 trace contexts: NULL as a whole while traces are off (unnest pads a missing array with
 * nulls), so a publish then sends no value for it.
 *
 * With `wake`, the statement also NOTIFYs the workers when it made a delivery: PostgreSQL sends
 * it as the transaction commits, without a statement and commit of its own (DeliveryNotifier)
 * and without waiting for the answer to be written first. Its payload is the transaction's id,
 * which a worker compares with the snapshot of its last claim (ClaimBatch.snapshot): a claim that
 * saw this transaction took its deliveries already. NOTIFY serialises the commits of the
 * transactions that send one, which costs nothing here: the api's publishes go through one
 * Batcher, one statement at a time. Transactions that may run side by side (batch publishing)
 * wake the workers with DeliveryNotifier after their commit instead.
 */
function publishManySql(wake: boolean): string {
  return `
  WITH input AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::bool[], $8::text[], $9::text[],
                         $10::text[], $11::bool[], $12::text[]) WITH ORDINALITY
      AS t(event_id, application_id, event_type, payload, created_at, delivery_id, ignores_subscription, idempotency_key, request_hash,
           ordering_key, filtered_out, trace_context, position)
  ), taken AS (
    INSERT INTO idempotency_keys AS k (application_id, key, request_hash, event_id, created_at)
    SELECT application_id, idempotency_key, request_hash, event_id, created_at FROM input WHERE idempotency_key IS NOT NULL
    ON CONFLICT (application_id, key) DO UPDATE
      SET request_hash = excluded.request_hash, event_id = excluded.event_id, created_at = excluded.created_at
      WHERE k.created_at <= excluded.created_at - interval '${IDEMPOTENCY_WINDOW_HOURS} hours'
    RETURNING event_id
  ), fresh AS (
    SELECT * FROM input WHERE idempotency_key IS NULL OR event_id IN (SELECT event_id FROM taken)
  ), event AS (
    INSERT INTO events (id, application_id, event_type, payload, created_at, idempotency_key, ordering_key, trace_context)
    SELECT event_id, application_id, event_type, payload, created_at, idempotency_key, ordering_key, trace_context FROM fresh
    RETURNING id
  ), delivery AS (
    INSERT INTO deliveries (id, event_id, application_id, event_type, status, ignores_subscription,
                            next_attempt_at, created_at, updated_at)
    SELECT i.delivery_id, i.event_id, i.application_id, i.event_type, ${INITIAL_STATUS}, i.ignores_subscription,
           i.created_at, i.created_at, i.created_at
      FROM fresh i
      JOIN webhooks w ON w.application_id = i.application_id
     WHERE i.ignores_subscription OR (NOT i.filtered_out AND EXISTS (
             SELECT 1 FROM subscriptions s
              WHERE s.application_id = i.application_id AND s.event_type = i.event_type AND s.active))
    RETURNING ${ENQUEUED_COLUMNS}, event_id
  ), queued AS (
    -- In the order the publishes came (a batch's items in array order): a keyed delivery takes
    -- its place in its key's order from the sequence, and is blocked behind an earlier one of
    -- its key, in the queue already or earlier in this statement (queue.sql.ts, ORDERING_LOCK_SQL).
    INSERT INTO delivery_queue (delivery_id, application_id, destination, due_at, paused, ordering_key, sequence, blocked)
    SELECT id, application_id, destination, next_attempt_at, status = 'paused', ordering_key,
           CASE WHEN ordering_key IS NOT NULL THEN nextval('delivery_queue_sequence_seq') END, blocked
      FROM (SELECT d.id, d.application_id, d.destination, d.next_attempt_at, d.status, i.ordering_key,
                   i.ordering_key IS NOT NULL
                     AND (row_number() OVER (PARTITION BY d.application_id, i.ordering_key ORDER BY i.position) > 1
                          OR EXISTS (SELECT 1 FROM delivery_queue e
                                      WHERE e.application_id = d.application_id AND e.ordering_key = i.ordering_key)) AS blocked
              FROM delivery d JOIN fresh i ON i.delivery_id = d.id
             ORDER BY i.position) ordered
  )
  ${
    wake
      ? `, notified AS (
    -- Its transaction's id: a worker whose last claim saw this transaction need not claim for it.
    SELECT pg_notify('${DELIVERY_CHANNEL}', pg_current_xact_id()::text) FROM (SELECT 1 FROM delivery LIMIT 1) made_one
  )
  SELECT f.event_id, d.id AS delivery_id FROM fresh f LEFT JOIN delivery d ON d.event_id = f.event_id, (SELECT count(*) FROM notified) wake`
      : `SELECT f.event_id, d.id AS delivery_id FROM fresh f LEFT JOIN delivery d ON d.event_id = f.event_id`
  }`;
}

const PUBLISH_MANY_SQL = preparedStatement('publish_many', publishManySql(false));
const PUBLISH_MANY_AND_WAKE_SQL = preparedStatement('publish_many_and_wake', publishManySql(true));

/** What the publishes that took keys first stored: $1 applications, $2 keys (pairwise). */
const FIRST_OF_KEYS_SQL = `
  SELECT k.application_id, k.key, k.request_hash, k.event_id, e.event_type,
         ARRAY(SELECT d.id FROM deliveries d WHERE d.event_id = k.event_id ORDER BY d.id) AS delivery_ids
    FROM unnest($1::int[], $2::text[]) AS t(application_id, key)
    JOIN idempotency_keys k ON k.application_id = t.application_id AND k.key = t.key
    LEFT JOIN events e ON e.application_id = k.application_id AND e.id = k.event_id`;

/**
 * A new delivery of a stored event under today's webhook and subscription, exactly as a publish
 * of it now would make one (a test ping ignores subscriptions, as when it was sent). The first
 * row says whether the event exists at all (Herald's operational notices are not replayable).
 * $1 event id, $2 application, $3 delivery id, $4 time, $5 the test ping's event type,
 * $6 the operational event types, $7 whether the subscription's filter refuses the payload.
 */
const REPLAY_SQL = `
  WITH event AS (
    SELECT id, event_type, event_type = $5 AS ignores_subscription FROM events
     WHERE id = $1 AND application_id = $2 AND event_type <> ALL($6::text[])
  ), delivery AS (
    INSERT INTO deliveries (id, event_id, application_id, event_type, status, ignores_subscription,
                            next_attempt_at, created_at, updated_at)
    SELECT $3, e.id, $2, e.event_type, ${INITIAL_STATUS}, e.ignores_subscription, $4, $4, $4
      FROM event e
      JOIN webhooks w ON w.application_id = $2
     WHERE e.ignores_subscription OR (NOT $7::bool AND EXISTS (
             SELECT 1 FROM subscriptions s WHERE s.application_id = $2 AND s.event_type = e.event_type AND s.active))
    RETURNING ${ENQUEUED_COLUMNS}
  ), queued AS (
    ${enqueue('delivery')}
  )
  SELECT e.event_type, (SELECT id FROM delivery) AS delivery_id FROM event e`;

/** The table whose statistics the api's cached plans need as its publishes add rows (EventRepository.growth). */
const PUBLISHED_TABLES = ['events'] as const;

@Injectable()
export class EventRepository {
  /** Concurrent publishes share a statement and a commit (see Batcher), with or without a key. */
  private readonly batcher = new Batcher<PublishEntry, PublishResult>((entries) => this.publishMany(entries));
  /**
   * As this process's publishes fill a fresh database, `events` is analyzed (PUBLISHED_TABLES,
   * GrowthMarks). Each api session caches the plan of the deliveries → events foreign-key check
   * like a prepared statement's; made while `events` was a page or two, it is a sequential scan,
   * kept until an ANALYZE of `events`: batches of 1,000 took 37 ms, then 1.6 s with 35,000 events
   * (bench/README.md, "Issue 20, sixth sitting"). Autovacuum's ANALYZE comes late on a busy
   * server, and never where it is off. Not `deliveries`: no cached plan of the api's reads it,
   * and each ANALYZE of a table the worker's claim and finish read replaces their plans in every
   * session (the worker refreshes it every five minutes; bench/README.md, "Issue 20, eighth sitting").
   */
  private readonly growth = new GrowthMarks();
  private readonly logger = new Logger(EventRepository.name);

  constructor(
    private readonly pg: PgPool,
    private readonly notifier: DeliveryNotifier,
  ) {}

  /** In the background: a publish never waits for it, and a failure is only logged. */
  private refreshPlannerStatistics(): void {
    analyzeUnlessRecent(this.pg, PUBLISHED_TABLES, 0)
      .then(({ notices }) => {
        for (const notice of notices) this.logger.warn({ notice }, 'refreshing the planner statistics: PostgreSQL warned');
      })
      .catch((error: Error) => this.logger.warn(`refreshing the planner statistics failed: ${error.message}`));
  }

  /**
   * Stores the event and, when the application has a webhook and an active subscription to it,
   * its delivery — in one statement, so both commit before the caller answers, or neither does.
   * With a key, the key is taken in the same statement (publishManySql); a key already held
   * stores nothing and returns what its first publish stored. The statement wakes the workers.
   */
  async publish(scope: ApplicationScope, event: NewEvent, idempotency: IdempotencyClaim | null = null): Promise<PublishResult> {
    return this.batcher.submit({ applicationId: scope.applicationId, event, idempotency });
  }

  /**
   * One statement for the whole batch. Should PostgreSQL refuse the data of one row (an unknown
   * event type, a value it cannot store), each publish is written on its own, so only the bad one
   * fails and concurrent publishes — other tenants' too — succeed. Any other failure (a timeout,
   * an overloaded server) fails the batch: retrying it row by row would multiply the load.
   */
  private async publishMany(entries: PublishEntry[]): Promise<(PublishResult | Error)[]> {
    try {
      return await this.writeInOrder(entries);
    } catch (error) {
      if (!isDataError(error)) throw error;
      const settled = await Promise.allSettled(entries.map((entry) => this.writeInOrder([entry])));
      return settled.map((outcome) => {
        if (outcome.status === 'fulfilled') return outcome.value[0];
        if (classifyDatabaseError(outcome.reason) === 'foreign_key_violation') return { kind: 'unknown_event_type' };
        return outcome.reason instanceof Error ? outcome.reason : new Error(String(outcome.reason));
      });
    }
  }

  /**
   * A batch (PRODUCT.md §5.1): every event with its delivery in one transaction, all or none,
   * and one wake-up of the workers. Keys are taken as for publish, item by item (a key taken
   * earlier in the same batch counts as taken). `accept` sees every item's result before the
   * commit and returns false to store none of them (a key reused with another request fails the
   * whole batch: the caller's rule). Results are in the order of `items`. Unknown event types
   * store nothing and are all named.
   */
  async publishBatch(
    scope: ApplicationScope,
    items: { event: NewEvent; idempotency: IdempotencyClaim | null }[],
    accept: (results: Exclude<PublishResult, { kind: 'unknown_event_type' }>[]) => boolean,
  ): Promise<BatchPublishResult | { kind: 'refused' }> {
    const refused = Symbol('refused');
    try {
      const result = await this.pg.transaction(async (sql): Promise<BatchPublishResult> => {
        const unknown = await unknownEventTypes(
          sql,
          items.map((item) => item.event.eventType),
        );
        if (unknown.length > 0) return { kind: 'unknown_event_types', indexes: unknown };
        const entries = items.map((item) => ({ applicationId: scope.applicationId, ...item }));
        if (entries.some((entry) => entry.event.orderingKey !== null)) await sql(ORDERING_LOCK_SQL, [[scope.applicationId]]);
        const results = (await this.write(sql, entries, PUBLISH_MANY_SQL)) as Exclude<PublishResult, { kind: 'unknown_event_type' }>[];
        if (!accept(results)) throw refused;
        return { kind: 'stored', results };
      });
      if (result.kind === 'stored' && result.results.some((r) => r.kind === 'stored' && r.record.deliveryIds.length > 0)) {
        this.notifier.deliveriesCommitted();
      }
      return result;
    } catch (error) {
      if (error === refused) return { kind: 'refused' };
      throw error;
    }
  }

  /**
   * Writes concurrent publishes in one statement that wakes the workers; when some carry an
   * ordering key, in a transaction that first takes their applications' ordering lock
   * (queue.sql.ts), so that their places in their keys' orders are taken one publisher at a time.
   */
  private writeInOrder(entries: PublishEntry[]): Promise<PublishResult[]> {
    const keyed = entries.filter((entry) => entry.event.orderingKey !== null).map((entry) => entry.applicationId);
    if (keyed.length === 0) return this.write(this.pg.sql, entries, PUBLISH_MANY_AND_WAKE_SQL);
    return this.pg.transaction(async (sql) => {
      await sql(ORDERING_LOCK_SQL, [keyed]);
      return this.write(sql, entries, PUBLISH_MANY_AND_WAKE_SQL);
    });
  }

  /**
   * Writes `entries` with `statement` (publishManySql) through `sql`, then reads what the
   * publishes that had taken the other keys stored. Within one statement a key can be taken once,
   * so only the first entry of each (application, key) is written; the others get its result as
   * a taken key.
   */
  private async write(sql: SqlQuery, entries: PublishEntry[], statement: typeof PUBLISH_MANY_SQL): Promise<PublishResult[]> {
    if (this.growth.added(entries.length)) this.refreshPlannerStatistics();
    const firstOfKey = new Map<string, number>();
    const written: PublishEntry[] = [];
    entries.forEach((entry, i) => {
      if (entry.idempotency) {
        const key = keyOf(entry.applicationId, entry.idempotency.key);
        if (firstOfKey.has(key)) return;
        firstOfKey.set(key, i);
      }
      written.push(entry);
    });
    const rows = await sql<{ event_id: string; delivery_id: string | null }>(statement, [
      written.map((e) => e.event.id),
      written.map((e) => e.applicationId),
      written.map((e) => e.event.eventType),
      written.map((e) => e.event.payload),
      written.map((e) => e.event.createdAt),
      written.map((e) => e.event.deliveryId),
      written.map((e) => e.event.ignoresSubscription),
      written.map((e) => e.idempotency?.key ?? null),
      written.map((e) => e.idempotency?.requestHash ?? null),
      written.map((e) => e.event.orderingKey),
      written.map((e) => e.event.filteredOut),
      written.some((e) => e.event.traceContext !== null) ? written.map((e) => e.event.traceContext) : null,
    ]);
    const stored = new Map(rows.map((row) => [row.event_id, row.delivery_id]));
    const takenBefore = written.filter((e) => !stored.has(e.event.id));
    const firsts = takenBefore.length > 0 ? await firstsOfKeys(sql, takenBefore) : new Map<string, FirstOfKey>();

    const results: PublishResult[] = [];
    entries.forEach((entry, i) => {
      const key = entry.idempotency ? keyOf(entry.applicationId, entry.idempotency.key) : null;
      const firstIndex = key === null ? i : firstOfKey.get(key)!;
      if (firstIndex !== i) {
        // Taken by an earlier entry of this statement: that entry's request and what it stored.
        const earlier = results[firstIndex];
        results.push(
          earlier.kind === 'stored'
            ? { kind: 'key_taken', first: { requestHash: entries[firstIndex].idempotency!.requestHash, record: earlier.record } }
            : earlier,
        );
        return;
      }
      if (stored.has(entry.event.id)) {
        const deliveryId = stored.get(entry.event.id);
        results.push({
          kind: 'stored',
          record: { eventId: entry.event.id, eventType: entry.event.eventType, deliveryIds: deliveryId ? [deliveryId] : [] },
        });
        return;
      }
      const first = firsts.get(key!);
      if (!first) throw new Error(`Idempotency key ${entry.idempotency!.key} was held, yet no publish under it is stored.`);
      results.push({ kind: 'key_taken', first });
    });
    return results;
  }

  /**
   * Delivers a stored event again (REPLAY_SQL): one new delivery when the application has a
   * webhook and subscribes to the event now (and `filteredOut`, the caller's reading of the
   * subscription's filter, is false), none otherwise. Null when the application has no such event.
   */
  async replay(
    scope: ApplicationScope,
    eventId: string,
    delivery: { id: string; createdAt: Date; testEventType: string; filteredOut: boolean },
  ): Promise<PublishedEventRecord | null> {
    let row: { event_type: string; delivery_id: string | null } | undefined;
    try {
      [row] = await this.pg.sql<{ event_type: string; delivery_id: string | null }>(REPLAY_SQL, [
        eventId,
        scope.applicationId,
        delivery.id,
        delivery.createdAt,
        delivery.testEventType,
        OPERATIONAL_EVENT_TYPES,
        delivery.filteredOut,
      ]);
    } catch (error) {
      // Retention removed the event between this statement's read of it and its insert.
      if (classifyDatabaseError(error) === 'foreign_key_violation') return null;
      throw error;
    }
    if (!row) return null;
    if (row.delivery_id) this.notifier.deliveriesCommitted();
    return { eventId, eventType: row.event_type, deliveryIds: row.delivery_id ? [row.delivery_id] : [] };
  }
}

interface FirstOfKey {
  requestHash: string;
  record: PublishedEventRecord;
}

function keyOf(applicationId: number, key: string): string {
  return `${applicationId}:${key}`;
}

/** What the publishes that took these entries' keys stored (FIRST_OF_KEYS_SQL), by keyOf. */
async function firstsOfKeys(sql: SqlQuery, entries: PublishEntry[]): Promise<Map<string, FirstOfKey>> {
  const rows = await sql<{
    application_id: number;
    key: string;
    request_hash: string;
    event_id: string;
    event_type: string | null;
    delivery_ids: string[];
  }>(FIRST_OF_KEYS_SQL, [entries.map((e) => e.applicationId), entries.map((e) => e.idempotency!.key)]);
  const firsts = new Map<string, FirstOfKey>();
  for (const row of rows) {
    // Retention removes events after the key's window, so a held key's event is there.
    if (row.event_type === null) throw new Error(`Idempotency key ${row.key} names event ${row.event_id}, which is gone.`);
    firsts.set(keyOf(Number(row.application_id), row.key), {
      requestHash: row.request_hash,
      record: { eventId: row.event_id, eventType: row.event_type, deliveryIds: row.delivery_ids },
    });
  }
  return firsts;
}

/** The indexes of the types the catalogue does not have. */
async function unknownEventTypes(sql: SqlQuery, types: string[]): Promise<number[]> {
  const known = new Set(
    (await sql<{ name: string }>(`SELECT name FROM event_types WHERE name = ANY($1::text[])`, [[...new Set(types)]])).map(
      (row) => row.name,
    ),
  );
  return types.flatMap((type, i) => (known.has(type) ? [] : [i]));
}
