import { setTimeout as sleep } from 'node:timers/promises';
import { firstIdAt, type DeliveryStatus } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { PgPool } from '../pg-pool';
import { DELIVERY_CHANNEL } from '../notifications/delivery-channel';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { deliveryColumns } from './delivery.sql';
import {
  DEQUEUED_COLUMNS,
  ENQUEUED_COLUMNS,
  ORDERING_LOCK_SQL,
  cancelDequeued,
  enqueue,
  leased,
  ready,
  shownStatus,
  unblockNext,
} from '../queue/queue.sql';
import { ApplicationScope, DeliveryAttemptRecord, DeliveryRecord, Page } from '../records';

/**
 * Failed deliveries requeued per statement by recover: each batch is one short transaction that
 * locks at most this many rows, so publishing and the workers never wait long behind a recover
 * of a million failures (bench/ recover measures publish latency while one runs).
 */
export const RECOVER_BATCH_SIZE = 1000;

/**
 * A pause between two batches of a recover: without it a recover keeps one PostgreSQL backend
 * busy back to back, and on a small machine publishing waits for the CPU (bench/ recover: publish
 * p99 up to 5.6× idle without the pause).
 */
const RECOVER_PAUSE_MS = 5;

/**
 * Created-at and id differ by at most this much for a delivery (both are taken from the same
 * clock as it is made); recover's walk starts this far before the id `since` gives.
 */
const ID_CLOCK_MARGIN_MS = 60_000;

/**
 * One batch of recover: the next failed deliveries of the application created in [since, until)
 * after the keyset id ($4), in id order through the (application_id, id) index, from the first
 * id `since` allows ($2 is that bound; ids are time-ordered, so the walk never reads what came
 * before). No index names `status` (an attempt's update must stay HOT), so the walk reads the
 * deliveries made since `since` and keeps the failed ones. Each gets one attempt now and no
 * automatic follow-ups (manual_attempt), as a manual retry does: a queue row due now and the
 * delivery pending. Rows another recover (or a retry) has locked are skipped, and the status is
 * checked again under the lock: two recovers never queue one delivery twice. The keyset moves
 * past every row seen, so a requeued delivery that fails again while this recover runs is not
 * picked up a second time. $1 application, $3 since, $5 until, $6 now, $7 batch size, $8 event
 * type or null.
 */
const RECOVER_BATCH_SQL = `
  WITH batch AS (
    SELECT id FROM deliveries
     WHERE application_id = $1 AND id >= $2 AND id > $4
       AND status = 'failed' AND destination = 'webhook'
       AND created_at >= $3 AND created_at < $5
       AND ($8::text IS NULL OR event_type = $8)
     ORDER BY id
     LIMIT $7
       FOR UPDATE SKIP LOCKED
  ), requeued AS (
    UPDATE deliveries d
       SET status = 'pending', next_attempt_at = $6, updated_at = $6, manual_attempt = true
      FROM batch b
     WHERE d.application_id = $1 AND d.id = b.id AND d.status = 'failed'
    RETURNING d.id, d.application_id, d.destination, d.next_attempt_at, d.status
  ), queued AS (
    ${enqueue('requeued')}
  )
  SELECT (SELECT count(*) FROM requeued)::int AS requeued, (SELECT count(*) FROM batch)::int AS seen,
         (SELECT max(id) FROM batch) AS last_id`;

/** The api's side of deliveries: the log, manual retries, recovery and cancellation. */
@Injectable()
export class DeliveryLogRepository {
  constructor(
    private readonly pg: PgPool,
    private readonly notifier: DeliveryNotifier,
  ) {}

  /**
   * Newest first; the cursor is the last id of the previous page (ids are time-ordered). On the
   * pg pool rather than Prisma: the log is read often and in pages of up to 100 rows, and
   * Prisma's engine cost the api both time and memory here (bench/ memory: RSS peak).
   */
  async list(
    scope: ApplicationScope,
    filter: { status?: DeliveryStatus; eventType?: string; since?: Date; until?: Date },
    limit: number,
    before: string | null,
  ): Promise<Page<DeliveryRecord>> {
    const values: unknown[] = [scope.applicationId, limit + 1];
    // Only the conditions asked for, so the planner always sees one simple (application_id, id) range.
    // The application's own deliveries: notices to the operator's endpoint are not the customer's.
    const conditions = ['d.application_id = $1', "d.destination = 'webhook'"];
    if (filter.status) conditions.push(statusCondition(filter.status, values));
    if (filter.eventType) conditions.push(`d.event_type = $${values.push(filter.eventType)}`);
    if (filter.since) conditions.push(`d.created_at >= $${values.push(filter.since)}`);
    if (filter.until) conditions.push(`d.created_at < $${values.push(filter.until)}`);
    if (before) conditions.push(`d.id < $${values.push(before)}`);
    const rows = await this.pg.sql<DeliveryRecord>(
      `SELECT ${deliveryColumns('d', 'shown')}
         FROM deliveries d
        WHERE ${conditions.join(' AND ')}
        ORDER BY d.id DESC
        LIMIT $2`,
      values,
    );
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? items[items.length - 1].id : null };
  }

  /**
   * The latest attempt of each of these deliveries (one page of the log), through the
   * (delivery_id, number) unique index: the log shows why a delivery failed without opening it.
   * The ids name both tables' rows, so each is read by index probes in any plan (shownStatus).
   */
  async lastAttempts(
    scope: ApplicationScope,
    ids: readonly string[],
  ): Promise<Map<string, Pick<DeliveryAttemptRecord, 'startedAt' | 'responseStatus' | 'error'>>> {
    if (ids.length === 0) return new Map();
    const rows = await this.pg.sql<{ delivery_id: string; started_at: Date; response_status: number | null; error: string | null }>(
      `SELECT DISTINCT ON (a.delivery_id) a.delivery_id, a.started_at, a.response_status, a.error
         FROM delivery_attempts a
         JOIN deliveries d ON d.application_id = $2 AND d.id = a.delivery_id AND d.id = ANY($1::text[])
        WHERE a.delivery_id = ANY($1::text[])
        ORDER BY a.delivery_id, a.number DESC`,
      [ids, scope.applicationId],
    );
    return new Map(
      rows.map((row) => [row.delivery_id, { startedAt: row.started_at, responseStatus: row.response_status, error: row.error }]),
    );
  }

  /** How many of the application's deliveries are in each status, with the log's own filters. */
  async countByStatus(
    scope: ApplicationScope,
    filter: { eventType?: string; since?: Date; until?: Date },
  ): Promise<Partial<Record<DeliveryStatus, number>>> {
    const values: unknown[] = [scope.applicationId];
    const conditions = ['d.application_id = $1', "d.destination = 'webhook'"];
    if (filter.eventType) conditions.push(`d.event_type = $${values.push(filter.eventType)}`);
    if (filter.since) conditions.push(`d.created_at >= $${values.push(filter.since)}`);
    if (filter.until) conditions.push(`d.created_at < $${values.push(filter.until)}`);
    // Counted by stored status, and `sending` (pending with a live lease; shownStatus) from the
    // queue rows that hold one, whose deliveries are then read by their keys as an array. Only a
    // ready row is ever leased (pausing clears a lease; a blocked row is never claimed), so
    // those are read through the application's part of the ready index, not the whole queue. Never a
    // join of the application's deliveries to the queue: with the queue last analyzed when its
    // pages held only dead rows (estimated empty), such a plan read one table whole for each row
    // of the other (minutes for 100,000 paused deliveries: the console's counts never came).
    const matching = conditions.join(' AND ');
    const rows = await this.pg.sql<{ status: DeliveryStatus; count: number }>(
      `WITH stored AS (
         SELECT d.status::text AS status, count(*)::int AS count FROM deliveries d WHERE ${matching} GROUP BY 1
       ), sending AS (
         SELECT count(*)::int AS count
           FROM deliveries d
          WHERE d.id = ANY(ARRAY(SELECT q.delivery_id FROM delivery_queue q
                                  WHERE q.application_id = $1 AND ${ready('q')} AND ${leased('q', 'now()')}))
            AND d.status = 'pending' AND ${matching}
       )
       SELECT status, count - CASE WHEN status = 'pending' THEN (SELECT count FROM sending) ELSE 0 END AS count FROM stored
       UNION ALL
       SELECT 'sending', count FROM sending WHERE count > 0`,
      values,
    );
    return Object.fromEntries(rows.filter((row) => row.count > 0).map((row) => [row.status, row.count]));
  }

  async find(scope: ApplicationScope, id: string): Promise<(DeliveryRecord & { attempts: DeliveryAttemptRecord[] }) | null> {
    const [row] = await this.pg.sql<
      DeliveryRecord & {
        attempts: (Omit<DeliveryAttemptRecord, 'startedAt' | 'nextAttemptAt'> & { startedAt: string; nextAttemptAt: string | null })[];
      }
    >(
      `SELECT ${deliveryColumns('d', 'shown')},
              COALESCE((SELECT json_agg(json_build_object(
                         'number', a.number, 'startedAt', a.started_at, 'durationMs', a.duration_ms, 'url', a.url,
                         'responseStatus', a.response_status, 'responseExcerpt', a.response_excerpt, 'error', a.error,
                         'nextAttemptAt', a.next_attempt_at, 'requestHeaders', a.request_headers) ORDER BY a.number)
                          FROM delivery_attempts a WHERE a.delivery_id = d.id), '[]') AS attempts
         FROM deliveries d
        WHERE d.id = $1 AND d.application_id = $2 AND d.destination = 'webhook'`,
      [id, scope.applicationId],
    );
    if (!row) return null;
    // json_agg gives timestamps as text; request_headers keeps its order (json, not jsonb).
    const attempts = row.attempts.map((attempt) => ({
      ...attempt,
      startedAt: new Date(attempt.startedAt),
      nextAttemptAt: attempt.nextAttemptAt === null ? null : new Date(attempt.nextAttemptAt),
    }));
    return { ...row, attempts };
  }

  /**
   * Asks for one attempt now. A finished (succeeded or failed) delivery gets exactly one more
   * attempt (back in the queue, due now); a pending one has its next attempt brought forward and
   * keeps its schedule after. Returns the delivery as it was before, or null when there is none:
   * the caller tells 'sending' and 'cancelled' (not retried here) from success by its status.
   * The queue row is locked before the delivery, in the order the worker's finish takes them,
   * and without waiting: a row a claim or a finish holds this instant is being sent.
   */
  async requestAttempt(scope: ApplicationScope, id: string, now: Date): Promise<{ before: DeliveryStatus; after: DeliveryRecord } | null> {
    return this.pg.transaction(async (sql) => {
      // A keyed delivery asked for now leaves its key's order (PRODUCT.md §13): the next of its key may be unblocked.
      await sql(ORDERING_LOCK_SQL, [[scope.applicationId]]);
      const queued = await sql<{ leased: boolean }>(
        `SELECT ${leased('q', '$2')} AS leased FROM delivery_queue q WHERE q.delivery_id = $1 FOR UPDATE SKIP LOCKED`,
        [id, now],
      );
      const [current] = await sql<DeliveryRecord & { destination: string; application_id: number }>(
        `SELECT ${deliveryColumns('d', 'shown')}, d.destination, d.application_id
           FROM deliveries d
          WHERE d.id = $1 AND d.application_id = $2 AND d.destination = 'webhook' FOR UPDATE`,
        [id, scope.applicationId],
      );
      if (!current) return null;
      // A queue row that was there but locked: a worker is claiming or finishing it right now.
      const held = current.status === 'pending' && (queued.length === 0 || queued[0].leased);
      const before: DeliveryStatus = held ? 'sending' : current.status;
      if (before !== 'pending' && before !== 'succeeded' && before !== 'failed') return { before, after: current };
      // `manual_attempt OR $3`: a pending delivery that is itself a manual attempt (asked for, or
      // recovered, and not sent yet) stays one when asked again, so it still gets exactly one
      // attempt; setting it to $3 (false) gave it the automatic follow-ups a manual one must not have.
      const [after] = await sql<DeliveryRecord>(
        `WITH requested AS (
           UPDATE deliveries SET status = 'pending', next_attempt_at = $2, updated_at = $2, manual_attempt = manual_attempt OR $3
            WHERE application_id = $4 AND id = $1
           RETURNING ${ENQUEUED_COLUMNS}, event_id, event_type, attempt_count, created_at
         ), queued AS (
           ${
             before === 'pending'
               ? `UPDATE delivery_queue q SET due_at = $2, ordering_key = NULL, sequence = NULL, blocked = false
                   FROM delivery_queue was WHERE q.delivery_id = $1 AND was.delivery_id = q.delivery_id AND NOT q.paused
                  RETURNING q.delivery_id, q.application_id, was.ordering_key`
               : `${enqueue('requested')} RETURNING delivery_id, application_id, ordering_key`
           }
         ), ${unblockNext('queued')}
         SELECT ${deliveryColumns('requested', 'stored')} FROM requested`,
        [id, now, before !== 'pending', scope.applicationId],
      );
      await sql(`SELECT pg_notify($1, '')::text`, [DELIVERY_CHANNEL]);
      return { before, after };
    });
  }

  /**
   * Gives every failed delivery created in [since, until) — of one event type, if given — one
   * attempt now, in batches of RECOVER_BATCH_SIZE (RECOVER_BATCH_SQL), each committed on its own
   * and each waking the workers. Returns how many were requeued.
   */
  async recover(scope: ApplicationScope, range: { since: Date; until: Date; eventType?: string }, now: Date): Promise<number> {
    let requeued = 0;
    const firstId = firstIdAt('dlv', new Date(range.since.getTime() - ID_CLOCK_MARGIN_MS));
    let after = '';
    for (;;) {
      const [batch] = await this.pg.sql<{ requeued: number; seen: number; last_id: string | null }>(RECOVER_BATCH_SQL, [
        scope.applicationId,
        firstId,
        range.since,
        after,
        range.until,
        now,
        RECOVER_BATCH_SIZE,
        range.eventType ?? null,
      ]);
      if (batch.requeued > 0) {
        requeued += batch.requeued;
        this.notifier.deliveriesCommitted();
      }
      if (batch.seen < RECOVER_BATCH_SIZE || batch.last_id === null) return requeued;
      after = batch.last_id;
      await sleep(RECOVER_PAUSE_MS);
    }
  }

  /** Cancels what waits to be sent (pending, not held by a worker, or paused): every delivery of the application, or only those of one event type. */
  async cancelPending(scope: ApplicationScope, now: Date, eventType?: string): Promise<number> {
    const rows = await this.pg.transaction(async (sql) => {
      await sql(ORDERING_LOCK_SQL, [[scope.applicationId]]);
      return sql(
        cancelDequeued(
          `DELETE FROM delivery_queue q
          WHERE q.application_id = $1 AND q.destination = 'webhook' AND NOT ${leased('q', '$2')}
            -- Every such entry, through the two indexes that hold them between them.
            AND (${ready('q')} OR q.paused OR q.blocked)
            AND ($3::text IS NULL OR EXISTS (SELECT 1 FROM deliveries d
                                              WHERE d.application_id = q.application_id AND d.id = q.delivery_id AND d.event_type = $3 AND NOT d.ignores_subscription))
         RETURNING ${DEQUEUED_COLUMNS}`,
          '$2',
        ),
        [scope.applicationId, now, eventType ?? null],
      );
    });
    return rows.length;
  }
}

/** The condition for the log's status filter on `d`; pushes its parameter onto `values`. */
function statusCondition(status: DeliveryStatus, values: unknown[]): string {
  // Only `pending` and `sending` need the queue row: the others are stored as they are shown.
  if (status === 'pending' || status === 'sending') return `${shownStatus('d')} = $${values.push(status)}`;
  return `d.status = $${values.push(status)}::delivery_status`;
}
