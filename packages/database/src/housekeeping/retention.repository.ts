import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { classifyDatabaseError } from '../database-errors';
import { PgPool, SqlQuery } from '../pg-pool';

/** What one pass of retention removed, by table. */
export interface RemovedRows {
  deliveries: number;
  /** Attempts removed with their deliveries (by cascade). */
  attempts: number;
  events: number;
  /** Customer portal links (PRODUCT.md §12) expired or revoked before the cutoff. */
  portalLinks: number;
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
 * Finished deliveries that last changed before $1, oldest first, through the partial index of
 * finished deliveries (deliveries_updated_at_idx); their attempts go with them (ON DELETE
 * CASCADE, through the (delivery_id, number) index). Pending, sending (and, with §10, paused)
 * deliveries are never in that index, so they are never removed.
 */
const REMOVE_DELIVERIES_SQL = `
  WITH doomed AS (
    SELECT id FROM deliveries
     WHERE status IN ('succeeded', 'failed', 'cancelled') AND updated_at < $1
     ORDER BY updated_at
     LIMIT $2
       FOR UPDATE SKIP LOCKED
  ), removed AS (
    DELETE FROM deliveries d USING doomed WHERE d.id = doomed.id RETURNING d.attempt_count
  )
  SELECT count(*)::int AS removed, coalesce(sum(attempt_count), 0)::int AS attempts FROM removed`;

/**
 * Events created before $1 that no delivery refers to any more, oldest first by the keyset
 * ($3 created_at, $4 id): an old event whose delivery is still pending stays, and is passed over
 * rather than read again by every later batch of this pass. A replay may give one of these
 * events a delivery while the statement runs, unseen by its snapshot; the deliveries → events
 * foreign key is RESTRICT, so that delete fails instead of taking the new delivery with it, and
 * the batch is done again (removeEvents).
 */
const REMOVE_EVENTS_SQL = `
  WITH seen AS (
    SELECT e.id, e.created_at FROM events e
     WHERE e.created_at < $1 AND (e.created_at, e.id) > ($3::timestamptz, $4::text)
     ORDER BY e.created_at, e.id
     LIMIT $2
  ), doomed AS (
    SELECT s.id FROM seen s
     WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = s.id)
  ), removed AS (
    DELETE FROM events e USING doomed WHERE e.id = doomed.id RETURNING e.id
  ), last AS (
    SELECT created_at, id FROM seen ORDER BY created_at DESC, id DESC LIMIT 1
  )
  SELECT (SELECT count(*) FROM removed)::int AS removed, (SELECT count(*) FROM seen)::int AS seen,
         (SELECT created_at FROM last) AS last_created_at, (SELECT id FROM last) AS last_id`;

/**
 * Retention (PRODUCT.md §11) as small indexed batch deletes, each its own statement and commit.
 * ARCHITECTURE.md ("Retention") says why batches and not time partitions.
 */
@Injectable()
export class RetentionRepository {
  constructor(private readonly pg: PgPool) {}

  /**
   * Removes, in batches of `batchSize`, finished deliveries (with their attempts) last changed
   * before `cutoff`, then events created before it that no delivery refers to, then portal links
   * that stopped working (expired or revoked) before it, each batch
   * followed by a pause in proportion to its time. `afterBatch` runs after each batch (the
   * worker counts there, and stops a pass by throwing). Null when another process is doing it
   * right now.
   */
  async removeOlderThan(
    cutoff: Date,
    options: { batchSize?: number; afterBatch?: (removed: RemovedRows) => Promise<void> | void } = {},
  ): Promise<RemovedRows | null> {
    const batchSize = options.batchSize ?? RETENTION_BATCH_SIZE;
    return this.pg.whileHoldingLock(RETENTION_LOCK_KEY, async (sql) => {
      const total: RemovedRows = { deliveries: 0, attempts: 0, events: 0, portalLinks: 0 };
      // Each batch is timed and followed by its pause (RETENTION_PAUSE_PER_BATCH_TIME).
      const paced = async <T>(batch: () => Promise<T>, removed: (result: T) => RemovedRows): Promise<T> => {
        const started = performance.now();
        const result = await batch();
        const busyMs = performance.now() - started;
        await options.afterBatch?.(removed(result));
        await sleep(Math.max(RETENTION_MIN_PAUSE_MS, busyMs * RETENTION_PAUSE_PER_BATCH_TIME));
        return result;
      };
      for (;;) {
        const removed = await paced(
          async () => (await sql<{ removed: number; attempts: number }>(REMOVE_DELIVERIES_SQL, [cutoff, batchSize]))[0],
          (batch) => ({ deliveries: batch.removed, attempts: batch.attempts, events: 0, portalLinks: 0 }),
        );
        total.deliveries += removed.removed;
        total.attempts += removed.attempts;
        if (removed.removed < batchSize) break;
      }
      let after: { createdAt: Date; id: string } | null = null;
      do {
        const batch = await paced(
          () => removeEvents(sql, cutoff, after, batchSize),
          (events) => ({ deliveries: 0, attempts: 0, events: events.removed, portalLinks: 0 }),
        );
        total.events += batch.removed;
        after = batch.next;
      } while (after);
      // Few rows (a link lives a day at most), so one statement.
      total.portalLinks = await paced(
        async () => (await sql(`DELETE FROM portal_links WHERE coalesce(revoked_at, expires_at) < $1 RETURNING 1`, [cutoff])).length,
        (portalLinks) => ({ deliveries: 0, attempts: 0, events: 0, portalLinks }),
      );
      return total;
    });
  }
}

/** One batch of old events after the keyset `after`; `next` is null once every old event has been looked at. */
async function removeEvents(
  sql: SqlQuery,
  cutoff: Date,
  after: { createdAt: Date; id: string } | null,
  limit: number,
): Promise<{ removed: number; next: { createdAt: Date; id: string } | null }> {
  const values = [cutoff, limit, after?.createdAt ?? new Date(0), after?.id ?? ''];
  type Batch = { removed: number; seen: number; last_created_at: Date | null; last_id: string | null };
  let batch: Batch;
  try {
    [batch] = await sql<Batch>(REMOVE_EVENTS_SQL, values);
  } catch (error) {
    // A replay gave an old event a delivery meanwhile (see REMOVE_EVENTS_SQL): the same batch
    // again, in a new statement whose snapshot sees that delivery and keeps the event.
    if (classifyDatabaseError(error) !== 'foreign_key_violation') throw error;
    [batch] = await sql<Batch>(REMOVE_EVENTS_SQL, values);
  }
  if (batch.seen < limit || batch.last_created_at === null || batch.last_id === null) return { removed: batch.removed, next: null };
  return { removed: batch.removed, next: { createdAt: batch.last_created_at, id: batch.last_id } };
}
