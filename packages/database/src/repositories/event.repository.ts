import { OPERATIONAL_EVENT_TYPES } from '@herald/core';
import { AppError, Errors, quoteInput } from '@herald/contracts';
import { Injectable } from '@nestjs/common';
import { classifyDatabaseError, isDataError } from '../database-errors';
import { Batcher } from '../batching/batcher';
import { DELIVERY_CHANNEL } from '../notifications/delivery-channel';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { PgPool, preparedStatement, SqlQuery } from '../pg-pool';
import { ApplicationScope } from './records';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface NewEvent {
  id: string;
  eventType: string;
  /** Compact JSON text; stored and sent as is. */
  payload: string;
  createdAt: Date;
  /** The key it was published under; null when none was given. */
  idempotencyKey: string | null;
  /** Used if the event is to be delivered. */
  deliveryId: string;
  /** Test pings are delivered whether or not the application subscribes to their event. */
  ignoresSubscription: boolean;
}

export interface PublishedEventRecord {
  eventId: string;
  eventType: string;
  deliveryIds: string[];
}

/**
 * A new delivery's status, in a statement that joins the application's webhook as `w`: paused
 * while the webhook is disabled (PRODUCT.md §10: nothing is dropped), else pending.
 */
const INITIAL_STATUS = `(CASE WHEN w.state = 'disabled' THEN 'paused' ELSE 'pending' END)::delivery_status`;

/**
 * The event and its delivery (only with a webhook and an active subscription, or for a test
 * ping) as one statement: both rows commit before the caller answers, or neither does. The
 * workers are woken afterwards (DeliveryNotifier). $1 event id, $2 application, $3 type,
 * $4 payload, $5 time, $6 delivery id, $7 ignores subscription, $8 idempotency key.
 */
const PUBLISH_SQL = preparedStatement(
  'publish',
  `
  WITH event AS (
    INSERT INTO events (id, application_id, event_type, payload, created_at, idempotency_key)
    VALUES ($1, $2, $3, $4, $5, $8)
    RETURNING id
  ), delivery AS (
    INSERT INTO deliveries (id, event_id, application_id, event_type, status, ignores_subscription,
                            next_attempt_at, created_at, updated_at)
    SELECT $6, (SELECT id FROM event), $2, $3, ${INITIAL_STATUS}, $7, $5, $5, $5
      FROM webhooks w
     WHERE w.application_id = $2
       AND ($7 OR EXISTS (SELECT 1 FROM subscriptions s WHERE s.application_id = $2 AND s.event_type = $3 AND s.active))
    RETURNING id
  )
  SELECT (SELECT id FROM event) AS event_id, (SELECT id FROM delivery) AS delivery_id`,
);

/**
 * Many events (one per array element) in one statement and one commit; the rows for each
 * event are the same as PUBLISH_SQL's. $1 ids, $2 applications, $3 types, $4 payloads,
 * $5 times, $6 delivery ids, $7 ignores subscription, $8 idempotency keys. With `wake`, the
 * statement also NOTIFYs the workers when it made a delivery: PostgreSQL sends it as the
 * transaction commits, without a statement and commit of its own (DeliveryNotifier) and without
 * waiting for the answer to be written first. NOTIFY serialises the commits of the transactions
 * that send one, which costs nothing here: the api's publishes go through one Batcher, one
 * statement at a time. Transactions that may run side by side (batch publishing) wake the
 * workers with DeliveryNotifier after their commit instead.
 */
function publishManySql(wake: boolean): string {
  return `
  WITH input AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::bool[], $8::text[])
      AS t(event_id, application_id, event_type, payload, created_at, delivery_id, ignores_subscription, idempotency_key)
  ), event AS (
    INSERT INTO events (id, application_id, event_type, payload, created_at, idempotency_key)
    SELECT event_id, application_id, event_type, payload, created_at, idempotency_key FROM input
    RETURNING id
  ), delivery AS (
    INSERT INTO deliveries (id, event_id, application_id, event_type, status, ignores_subscription,
                            next_attempt_at, created_at, updated_at)
    SELECT i.delivery_id, i.event_id, i.application_id, i.event_type, ${INITIAL_STATUS}, i.ignores_subscription,
           i.created_at, i.created_at, i.created_at
      FROM input i
      JOIN webhooks w ON w.application_id = i.application_id
     WHERE i.ignores_subscription OR EXISTS (
             SELECT 1 FROM subscriptions s
              WHERE s.application_id = i.application_id AND s.event_type = i.event_type AND s.active)
    RETURNING id, event_id
  )
  ${
    wake
      ? `, notified AS (
    SELECT pg_notify('${DELIVERY_CHANNEL}', '') FROM (SELECT 1 FROM delivery LIMIT 1) made_one
  )
  SELECT event_id, id AS delivery_id FROM delivery, (SELECT count(*) FROM notified) wake`
      : `SELECT event_id, id AS delivery_id FROM delivery`
  }`;
}

const PUBLISH_MANY_SQL = preparedStatement('publish_many', publishManySql(false));
const PUBLISH_MANY_AND_WAKE_SQL = preparedStatement('publish_many_and_wake', publishManySql(true));

/**
 * A new delivery of a stored event under today's webhook and subscription, exactly as a publish
 * of it now would make one (a test ping ignores subscriptions, as when it was sent). The first
 * row says whether the event exists at all (Herald's operational notices are not replayable).
 * $1 event id, $2 application, $3 delivery id, $4 time, $5 the test ping's event type,
 * $6 the operational event types.
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
     WHERE e.ignores_subscription OR EXISTS (
             SELECT 1 FROM subscriptions s WHERE s.application_id = $2 AND s.event_type = e.event_type AND s.active)
    RETURNING id
  )
  SELECT e.event_type, (SELECT id FROM delivery) AS delivery_id FROM event e`;

@Injectable()
export class EventRepository {
  /** Concurrent publishes share a statement and a commit (see Batcher). */
  private readonly batcher = new Batcher<{ scope: ApplicationScope; event: NewEvent }, PublishedEventRecord>((items) =>
    this.insertMany(items),
  );

  constructor(
    private readonly pg: PgPool,
    private readonly notifier: DeliveryNotifier,
  ) {}

  /**
   * Stores the event and, when the application has a webhook and an active subscription to it,
   * its delivery — in one statement, so both commit before the caller answers, or neither does.
   * The statement wakes the workers itself (publishManySql).
   */
  async publish(scope: ApplicationScope, event: NewEvent): Promise<PublishedEventRecord> {
    return this.batcher.submit({ scope, event });
  }

  /**
   * One statement for the whole batch. Should PostgreSQL refuse the data of one row (an unknown
   * event type, a value it cannot store), each event is written on its own, so only the bad one
   * fails and concurrent publishes — other tenants' too — succeed. Any other failure (a timeout,
   * an overloaded server) fails the batch: retrying it row by row would multiply the load.
   */
  private async insertMany(items: { scope: ApplicationScope; event: NewEvent }[]): Promise<(PublishedEventRecord | Error)[]> {
    let rows: { event_id: string; delivery_id: string }[];
    try {
      rows = await this.pg.sql(PUBLISH_MANY_AND_WAKE_SQL, [
        items.map((i) => i.event.id),
        items.map((i) => i.scope.applicationId),
        items.map((i) => i.event.eventType),
        items.map((i) => i.event.payload),
        items.map((i) => i.event.createdAt),
        items.map((i) => i.event.deliveryId),
        items.map((i) => i.event.ignoresSubscription),
        items.map((i) => i.event.idempotencyKey),
      ]);
    } catch (error) {
      if (!isDataError(error)) throw error;
      const settled = await Promise.allSettled(items.map((i) => this.insert(this.pg.sql, i.scope, i.event)));
      if (settled.some((outcome) => outcome.status === 'fulfilled' && outcome.value.deliveryIds.length > 0)) {
        this.notifier.deliveriesCommitted();
      }
      return settled.map((outcome) =>
        outcome.status === 'fulfilled'
          ? outcome.value
          : outcome.reason instanceof Error
            ? outcome.reason
            : new Error(String(outcome.reason)),
      );
    }
    const deliveryOf = new Map(rows.map((row) => [row.event_id, row.delivery_id]));
    return items.map(({ event }) => {
      const deliveryId = deliveryOf.get(event.id);
      return { eventId: event.id, eventType: event.eventType, deliveryIds: deliveryId ? [deliveryId] : [] };
    });
  }

  /**
   * Like publish, under an idempotency key remembered for 24 hours: the same key with the same
   * request hash answers with the first event; with another hash it is a 400-07. Concurrent
   * requests with one key serialise on the key's row, which the first statement locks.
   */
  async publishOnce(
    scope: ApplicationScope,
    event: NewEvent,
    idempotency: { key: string; requestHash: string },
  ): Promise<PublishedEventRecord & { replayed: boolean }> {
    const expiredBefore = new Date(event.createdAt.getTime() - IDEMPOTENCY_WINDOW_MS);
    const published = await this.pg.transaction(async (sql) => {
      const claimed = await sql(
        `INSERT INTO idempotency_keys AS k (application_id, key, request_hash, event_id, created_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (application_id, key) DO UPDATE
           SET request_hash = excluded.request_hash, event_id = excluded.event_id, created_at = excluded.created_at
           WHERE k.created_at <= $6
         RETURNING 1`,
        [scope.applicationId, idempotency.key, idempotency.requestHash, event.id, event.createdAt, expiredBefore],
      );
      if (claimed.length > 0) return { ...(await this.insert(sql, scope, event)), replayed: false };

      const [first] = await sql<{ request_hash: string; event_id: string; event_type: string | null; delivery_ids: string[] }>(
        `SELECT k.request_hash, k.event_id, e.event_type,
                ARRAY(SELECT d.id FROM deliveries d WHERE d.event_id = k.event_id ORDER BY d.id) AS delivery_ids
           FROM idempotency_keys k LEFT JOIN events e ON e.id = k.event_id
          WHERE k.application_id = $1 AND k.key = $2`,
        [scope.applicationId, idempotency.key],
      );
      if (first.request_hash !== idempotency.requestHash) throw keyReused('idempotency_key');
      if (first.event_type === null) throw new Error(`Idempotency key ${idempotency.key} names event ${first.event_id}, which is gone.`);
      return { eventId: first.event_id, eventType: first.event_type, deliveryIds: first.delivery_ids, replayed: true };
    });
    if (!published.replayed && published.deliveryIds.length > 0) this.notifier.deliveriesCommitted();
    return published;
  }

  /**
   * A batch (PRODUCT.md §5.1): every event with its delivery in one transaction, all or none,
   * and one wake-up of the workers. Keys behave as for publishOnce, item by item: a key already
   * taken (also earlier in this batch) with the same request answers with its first event, with
   * another request it fails the whole batch (400-07 naming the item). Unknown event types fail
   * it too, each named. Results are in the order of `items`.
   */
  async publishBatch(
    scope: ApplicationScope,
    items: { event: NewEvent; idempotency: { key: string; requestHash: string } | null }[],
  ): Promise<PublishedEventRecord[]> {
    const results = await this.pg.transaction(async (sql) => {
      await assertKnownEventTypes(
        sql,
        items.map((item) => item.event.eventType),
      );
      const answers = await this.takeIdempotencyKeys(sql, scope, items);
      const fresh = items.filter((_, i) => answers[i] === 'new').map((item) => item.event);
      const deliveryOf = new Map<string, string>();
      if (fresh.length > 0) {
        const rows = await sql<{ event_id: string; delivery_id: string }>(PUBLISH_MANY_SQL, [
          fresh.map((event) => event.id),
          fresh.map(() => scope.applicationId),
          fresh.map((event) => event.eventType),
          fresh.map((event) => event.payload),
          fresh.map((event) => event.createdAt),
          fresh.map((event) => event.deliveryId),
          fresh.map((event) => event.ignoresSubscription),
          fresh.map((event) => event.idempotencyKey),
        ]);
        for (const row of rows) deliveryOf.set(row.event_id, row.delivery_id);
      }
      const firstOfKey = new Map<string, PublishedEventRecord>();
      return items.map(({ event, idempotency }, i): PublishedEventRecord & { isNew: boolean } => {
        const answer = answers[i];
        if (answer === 'new') {
          const delivery = deliveryOf.get(event.id);
          const record = { eventId: event.id, eventType: event.eventType, deliveryIds: delivery ? [delivery] : [] };
          if (idempotency) firstOfKey.set(idempotency.key, record);
          return { ...record, isNew: true };
        }
        // 'earlier': the same key and request earlier in this batch.
        return { ...(answer === 'earlier' ? firstOfKey.get(idempotency!.key)! : answer), isNew: false };
      });
    });
    if (results.some((result) => result.isNew && result.deliveryIds.length > 0)) this.notifier.deliveriesCommitted();
    return results.map(({ isNew: _isNew, ...record }) => record);
  }

  /**
   * For each item: 'new' when it is to be stored (no key, or its key taken now), 'earlier' when
   * an earlier item of the batch took its key with the same request, or the first answer of a
   * key taken before. Two statements whatever the batch: the keys are taken together, and the
   * first answers of those already taken read together.
   */
  private async takeIdempotencyKeys(
    sql: SqlQuery,
    scope: ApplicationScope,
    items: { event: NewEvent; idempotency: { key: string; requestHash: string } | null }[],
  ): Promise<('new' | 'earlier' | PublishedEventRecord)[]> {
    const firstIndex = new Map<string, number>();
    items.forEach(({ idempotency }, i) => {
      if (idempotency && !firstIndex.has(idempotency.key)) firstIndex.set(idempotency.key, i);
    });
    const answers: ('new' | 'earlier' | PublishedEventRecord)[] = items.map(() => 'new');
    if (firstIndex.size === 0) return answers;
    const keyed = [...firstIndex.values()].map((i) => items[i]);
    const now = keyed[0].event.createdAt;
    const taken = await sql<{ key: string }>(
      `INSERT INTO idempotency_keys AS k (application_id, key, request_hash, event_id, created_at)
       SELECT $1, t.key, t.request_hash, t.event_id, $5 FROM unnest($2::text[], $3::text[], $4::text[]) AS t(key, request_hash, event_id)
       ON CONFLICT (application_id, key) DO UPDATE
         SET request_hash = excluded.request_hash, event_id = excluded.event_id, created_at = excluded.created_at
         WHERE k.created_at <= $6
       RETURNING key`,
      [
        scope.applicationId,
        keyed.map((item) => item.idempotency!.key),
        keyed.map((item) => item.idempotency!.requestHash),
        keyed.map((item) => item.event.id),
        now,
        new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS),
      ],
    );
    const takenNow = new Set(taken.map((row) => row.key));
    const before = [...firstIndex.keys()].filter((key) => !takenNow.has(key));
    const firsts = new Map<string, { request_hash: string; event_id: string; event_type: string | null; delivery_ids: string[] }>();
    if (before.length > 0) {
      const rows = await sql<{ key: string; request_hash: string; event_id: string; event_type: string | null; delivery_ids: string[] }>(
        `SELECT k.key, k.request_hash, k.event_id, e.event_type,
                ARRAY(SELECT d.id FROM deliveries d WHERE d.event_id = k.event_id ORDER BY d.id) AS delivery_ids
           FROM idempotency_keys k LEFT JOIN events e ON e.id = k.event_id
          WHERE k.application_id = $1 AND k.key = ANY($2::text[])`,
        [scope.applicationId, before],
      );
      for (const row of rows) firsts.set(row.key, row);
    }
    items.forEach(({ idempotency }, i) => {
      if (!idempotency) return;
      const first = firsts.get(idempotency.key);
      const firstHash = first ? first.request_hash : items[firstIndex.get(idempotency.key)!].idempotency!.requestHash;
      if (firstHash !== idempotency.requestHash) throw keyReused(`events[${i}].idempotency_key`);
      if (first) {
        if (first.event_type === null) throw new Error(`Idempotency key ${idempotency.key} names event ${first.event_id}, which is gone.`);
        answers[i] = { eventId: first.event_id, eventType: first.event_type, deliveryIds: first.delivery_ids };
      } else if (firstIndex.get(idempotency.key) !== i) {
        answers[i] = 'earlier';
      }
    });
    return answers;
  }

  /**
   * Delivers a stored event again (REPLAY_SQL): one new delivery when the application has a
   * webhook and subscribes to the event now, none otherwise. Null when the application has no
   * such event.
   */
  async replay(
    scope: ApplicationScope,
    eventId: string,
    delivery: { id: string; createdAt: Date; testEventType: string },
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

  /** PUBLISH_SQL through `sql`: on the pool, or in publishOnce's transaction. */
  private async insert(sql: SqlQuery, scope: ApplicationScope, event: NewEvent): Promise<PublishedEventRecord> {
    const app = scope.applicationId;
    try {
      const [row] = await sql<{ event_id: string; delivery_id: string | null }>(PUBLISH_SQL, [
        event.id,
        app,
        event.eventType,
        event.payload,
        event.createdAt,
        event.deliveryId,
        event.ignoresSubscription,
        event.idempotencyKey,
      ]);
      return { eventId: row.event_id, eventType: event.eventType, deliveryIds: row.delivery_id ? [row.delivery_id] : [] };
    } catch (error) {
      if (classifyDatabaseError(error) === 'foreign_key_violation') {
        throw Errors.unknownEventType(event.eventType, 'event');
      }
      throw error;
    }
  }
}

function keyReused(field: string): AppError {
  return new AppError('IDEMPOTENCY_KEY_REUSED', 'This idempotency key was used in the last 24 hours with a different request.', {
    details: [{ field, message: 'already used with a different event or payload' }],
  });
}

/** Fails with 400-04 naming every item (`events[i].event`) whose type is not in the catalogue. */
async function assertKnownEventTypes(sql: SqlQuery, types: string[]): Promise<void> {
  const known = new Set(
    (await sql<{ name: string }>(`SELECT name FROM event_types WHERE name = ANY($1::text[])`, [[...new Set(types)]])).map(
      (row) => row.name,
    ),
  );
  const unknown = types.map((type, i) => ({ type, i })).filter(({ type }) => !known.has(type));
  if (unknown.length === 0) return;
  const first = Errors.unknownEventType(unknown[0].type, `events[${unknown[0].i}].event`);
  throw new AppError('UNKNOWN_EVENT_TYPE', first.message, {
    details: unknown.map(({ type, i }) => ({ field: `events[${i}].event`, message: `unknown event type ${quoteInput(type)}` })),
  });
}
