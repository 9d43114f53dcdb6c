import { firstIdAt } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { classifyDatabaseError } from '../database-errors';
import { PgPool, SqlQuery } from '../pg-pool';

/** What one pass of retention removed, by table. */
export interface RemovedRows {
  deliveries: number;
  /** Attempts removed with their deliveries. */
  attempts: number;
  events: number;
  /** Customer portal links (PRODUCT.md §12) expired or revoked before the cutoff. */
  portalLinks: number;
  /** Audit records (PRODUCT.md §16) older than their own cutoff, HERALD_AUDIT_RETENTION_DAYS. */
  auditRecords: number;
  /** Hours of delivery statistics (PRODUCT.md §16) older than theirs, STATISTICS_RETENTION_DAYS. */
  statistics: number;
}

/** Rows removed per statement: small enough that each delete is a short transaction holding few locks. */
export const RETENTION_BATCH_SIZE = 1000;

/**
 * Retention's share of the database's time: after each batch it waits this many times as long as
 * the batch took (at least RETENTION_MIN_PAUSE_MS), so its connection is busy at most a quarter
 * of the time and publishing and claiming get the cores in between. A fixed 10 ms pause left it
 * busy 60-65% of the time (batches take 15-20 ms) and publish p99 rose up to 13x (bench/ retention).
 */
export const RETENTION_PAUSE_PER_BATCH_TIME = 3;
export const RETENTION_MIN_PAUSE_MS = 10;

/** The advisory lock a retention pass holds, so one process at a time does it. */
export const RETENTION_LOCK_KEY = 72_707_369_002;

/**
 * The batch both statements of one round of retention look at: the next $1 events made before
 * the cutoff, after the keyset ($2 application, $3 id), by the events' key (application_id, id).
 * Applications are taken in order, and each one's events up to $4, the first id of the cutoff's
 * millisecond: ids are ULIDs whose first ten characters are the time they were made, so no
 * index of the events' age is needed (every publish wrote one, ARCHITECTURE.md "Keys"). An
 * application without old events costs one probe of the key.
 */
const SEEN_SQL = `
  seen AS MATERIALIZED (
    SELECT e.application_id, e.id, e.created_at
      FROM applications a
      CROSS JOIN LATERAL (
        SELECT e.application_id, e.id, e.created_at FROM events e
         WHERE e.application_id = a.id AND e.id < $4::text AND (a.id > $2::int OR e.id > $3::text)
         ORDER BY e.id
         LIMIT $1::int) e
     WHERE a.id >= $2::int
     ORDER BY a.id, e.id
     LIMIT $1::int
  )`;

/**
 * One batch of retention (SEEN_SQL): the deliveries of those events that finished (succeeded,
 * failed, cancelled) before $5, the cutoff, go, with their attempts (through the attempts' (delivery_id,
 * number) key: there is no cascade, see the schema). A delivery is never older than its event,
 * so no other delivery can be due for removal. Unfinished deliveries (those in the queue) never
 * are; rows a manual retry has locked are skipped and checked again under the lock. Deliveries
 * are found through their events, not through an index of their own status or update time: such
 * an index would make every attempt's update of `deliveries` a non-HOT one.
 */
const REMOVE_DELIVERIES_SQL = `
  WITH ${SEEN_SQL}, doomed AS (
    SELECT d.application_id, d.id FROM seen s JOIN deliveries d ON d.event_id = s.id AND d.application_id = s.application_id
     WHERE d.status IN ('succeeded', 'failed', 'cancelled') AND d.updated_at < $5
       FOR UPDATE OF d SKIP LOCKED
  ), attempts AS (
    DELETE FROM delivery_attempts a USING doomed WHERE a.delivery_id = doomed.id RETURNING 1
  ), removed AS (
    DELETE FROM deliveries d USING doomed WHERE d.application_id = doomed.application_id AND d.id = doomed.id RETURNING 1
  ), last AS (
    SELECT application_id, id FROM seen ORDER BY application_id DESC, id DESC LIMIT 1
  )
  SELECT (SELECT count(*) FROM removed)::int AS removed, (SELECT count(*) FROM attempts)::int AS attempts,
         (SELECT count(*) FROM seen)::int AS seen, (SELECT application_id FROM last) AS last_application_id, (SELECT id FROM last) AS last_id`;

/**
 * The events of the same batch (REMOVE_DELIVERIES_SQL has removed what it could of their
 * deliveries, in a statement of its own, so this one's snapshot sees that) that no delivery refers
 * to any more: an old event whose delivery is still pending, or finished recently, stays. A
 * replay may give one of these events a delivery while the statement runs, unseen by its
 * snapshot; the deliveries → events foreign key is RESTRICT, so that delete fails instead of
 * taking the new delivery with it, and the statement is run again (removeBatch).
 */
const REMOVE_EVENTS_SQL = `
  WITH ${SEEN_SQL}, doomed AS (
    SELECT s.application_id, s.id FROM seen s WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = s.id)
  )
  DELETE FROM events e USING doomed WHERE e.application_id = doomed.application_id AND e.id = doomed.id RETURNING e.id`;

/** One batch of the oldest audit records before $1, through their `at` index. $2 batch size. */
const REMOVE_AUDIT_SQL = `
  DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < $1 ORDER BY at LIMIT $2) RETURNING 1`;

/** One batch of the oldest hours of delivery statistics before $1, through their `hour` index. $2 batch size. */
const REMOVE_STATISTICS_SQL = `
  DELETE FROM delivery_stats s
   USING (SELECT application_id, hour, event_type FROM delivery_stats WHERE hour < $1 ORDER BY hour LIMIT $2) doomed
   WHERE (s.application_id, s.hour, s.event_type) = (doomed.application_id, doomed.hour, doomed.event_type)
  RETURNING 1`;

/**
 * Retention (PRODUCT.md §11) as small indexed batch deletes, each its own statement and commit.
 * ARCHITECTURE.md ("Retention") says why batches and not time partitions.
 */
@Injectable()
export class RetentionRepository {
  constructor(private readonly pg: PgPool) {}

  /**
   * Removes, in batches of `batchSize` events created before `cutoff`, their deliveries (with
   * their attempts) that finished before it and then those of the events no delivery refers to
   * any more; then portal links that stopped working (expired or revoked) before it; then, given
   * `auditCutoff`, audit records older than that, and given `statisticsCutoff`, the hours of
   * delivery statistics before it, in batches too. Each batch is followed by a
   * pause in proportion to its time. `afterBatch` runs after each batch (the
   * worker counts there, and stops a pass by throwing). Null when another process is doing it
   * right now.
   */
  async removeOlderThan(
    cutoff: Date,
    options: {
      batchSize?: number;
      auditCutoff?: Date;
      statisticsCutoff?: Date;
      afterBatch?: (removed: RemovedRows) => Promise<void> | void;
    } = {},
  ): Promise<RemovedRows | null> {
    const batchSize = options.batchSize ?? RETENTION_BATCH_SIZE;
    return this.pg.whileHoldingLock(RETENTION_LOCK_KEY, async (sql) => {
      const total: RemovedRows = { deliveries: 0, attempts: 0, events: 0, portalLinks: 0, auditRecords: 0, statistics: 0 };
      const none: RemovedRows = { ...total };
      // Each batch is timed and followed by its pause (RETENTION_PAUSE_PER_BATCH_TIME).
      const paced = async <T>(batch: () => Promise<T>, removed: (result: T) => RemovedRows): Promise<T> => {
        const started = performance.now();
        const result = await batch();
        const busyMs = performance.now() - started;
        await options.afterBatch?.(removed(result));
        await sleep(Math.max(RETENTION_MIN_PAUSE_MS, busyMs * RETENTION_PAUSE_PER_BATCH_TIME));
        return result;
      };
      let after: EventKey | null = null;
      do {
        const batch = await paced(
          () => removeBatch(sql, cutoff, after, batchSize),
          (removed) => ({ ...none, deliveries: removed.deliveries, attempts: removed.attempts, events: removed.events }),
        );
        total.deliveries += batch.deliveries;
        total.attempts += batch.attempts;
        total.events += batch.events;
        after = batch.next;
      } while (after);
      // Few rows (a link lives a day at most), so one statement.
      total.portalLinks = await paced(
        async () => (await sql(`DELETE FROM portal_links WHERE coalesce(revoked_at, expires_at) < $1 RETURNING 1`, [cutoff])).length,
        (portalLinks) => ({ ...none, portalLinks }),
      );
      if (options.auditCutoff) {
        const auditCutoff = options.auditCutoff;
        for (let removed = batchSize; removed === batchSize;) {
          removed = await paced(
            async () => (await sql(REMOVE_AUDIT_SQL, [auditCutoff, batchSize])).length,
            (auditRecords) => ({ ...none, auditRecords }),
          );
          total.auditRecords += removed;
        }
      }
      if (options.statisticsCutoff) {
        const statisticsCutoff = options.statisticsCutoff;
        for (let removed = batchSize; removed === batchSize;) {
          removed = await paced(
            async () => (await sql(REMOVE_STATISTICS_SQL, [statisticsCutoff, batchSize])).length,
            (statistics) => ({ ...none, statistics }),
          );
          total.statistics += removed;
        }
      }
      return total;
    });
  }
}

/** An event's key: where one batch of retention ended and the next begins. */
interface EventKey {
  applicationId: number;
  id: string;
}

/**
 * One batch of old events after the keyset `after`: their finished deliveries, then the events
 * left without any; `next` is null once every old event has been looked at.
 */
async function removeBatch(
  sql: SqlQuery,
  cutoff: Date,
  after: EventKey | null,
  limit: number,
): Promise<{ deliveries: number; attempts: number; events: number; next: EventKey | null }> {
  const seen = [limit, after?.applicationId ?? -2_147_483_648, after?.id ?? '', firstIdAt('evt', cutoff)];
  type Batch = { removed: number; attempts: number; seen: number; last_application_id: number | null; last_id: string | null };
  const [batch] = await sql<Batch>(REMOVE_DELIVERIES_SQL, [...seen, cutoff]);
  let events: number;
  try {
    events = (await sql(REMOVE_EVENTS_SQL, seen)).length;
  } catch (error) {
    // A replay gave an old event a delivery meanwhile (see REMOVE_EVENTS_SQL): the same batch
    // again, in a new statement whose snapshot sees that delivery and keeps the event.
    if (classifyDatabaseError(error) !== 'foreign_key_violation') throw error;
    events = (await sql(REMOVE_EVENTS_SQL, seen)).length;
  }
  const next =
    batch.seen < limit || batch.last_application_id === null || batch.last_id === null
      ? null
      : { applicationId: batch.last_application_id, id: batch.last_id };
  return { deliveries: batch.removed, attempts: batch.attempts, events, next };
}
