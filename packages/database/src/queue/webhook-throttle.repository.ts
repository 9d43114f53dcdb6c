import { Injectable } from '@nestjs/common';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { AuditOf, insertAudit } from '../audit/audit.sql';
import { PgPool } from '../pg-pool';
import { ApplicationScope } from '../records';
import { THROTTLE_HORIZON_MS } from './throttle.sql';

/** Reserved slots cleared per statement when a throttle changes: each batch is a short transaction. */
export const THROTTLE_RESET_BATCH_SIZE = 1000;

/**
 * One batch of an application's deliveries that reserved a slot before the throttle changed,
 * made to take a new one under the new throttle (or none): a pending one becomes due at its
 * creation time, so the claim takes them oldest first. Slots reserved since (`slot_reserved_at` from
 * `now` on) are of the new rate and stay, so a busy backlog cannot keep this going. It waits for
 * rows a claim has locked rather than skipping them, so none keeps a slot of the old rate.
 * $1 application, $2 now, $3 batch size.
 */
const CLEAR_RESERVED_SLOTS_SQL = `
  WITH batch AS (
    SELECT delivery_id FROM delivery_queue
     WHERE application_id = $1 AND throttle_slot_at IS NOT NULL AND slot_reserved_at < $2 LIMIT $3 FOR UPDATE
  )
  UPDATE delivery_queue q
     SET throttle_slot_at = NULL, slot_reserved_at = NULL,
         due_at = CASE WHEN q.paused THEN q.due_at ELSE d.created_at END
    FROM batch, deliveries d
   WHERE q.delivery_id = batch.delivery_id AND d.id = q.delivery_id AND q.throttle_slot_at IS NOT NULL AND q.slot_reserved_at < $2
  RETURNING CASE WHEN q.paused THEN 'paused' ELSE 'pending' END AS status`;

/**
 * A webhook's throttle (PRODUCT.md §10): at most `per_second` attempts a second reach it,
 * however many workers run. The worker's claim enforces it (throttle.sql.ts); this reads and
 * sets it.
 */
@Injectable()
export class WebhookThrottleRepository {
  constructor(
    private readonly pg: PgPool,
    private readonly notifier: DeliveryNotifier,
  ) {}

  /** `{ perSecond }` (null: no throttle), or null when the application has no webhook. */
  async find(scope: ApplicationScope): Promise<{ perSecond: number | null } | null> {
    const [row] = await this.pg.sql<{ throttle_per_second: number | null }>(
      'SELECT throttle_per_second FROM webhooks WHERE application_id = $1',
      [scope.applicationId],
    );
    return row ? { perSecond: row.throttle_per_second } : null;
  }

  /**
   * Sets the throttle (null removes it), with the audit record `audit` makes of the setting before
   * and after, in one transaction; null (and no record) when the application has no webhook.
   * Deliveries waiting for a slot of the old rate take a new one: the next slot is brought back to
   * the end of those already held by workers (within THROTTLE_HORIZON_MS), and every reservation
   * is cleared. The next slot is not reset to now: held deliveries still go out in their slots.
   */
  async set(
    scope: ApplicationScope,
    perSecond: number | null,
    now: Date,
    audit: AuditOf<{ before: number | null; after: number | null }>,
  ): Promise<{ perSecond: number | null } | null> {
    const row = await this.pg.transaction(async (sql) => {
      const [before] = await sql<{ throttle_per_second: number | null }>(
        'SELECT throttle_per_second FROM webhooks WHERE application_id = $1 FOR UPDATE',
        [scope.applicationId],
      );
      if (!before) return null;
      const [after] = await sql<{ throttle_per_second: number | null }>(
        'UPDATE webhooks SET throttle_per_second = $2, updated_at = $3 WHERE application_id = $1 RETURNING throttle_per_second',
        [scope.applicationId, perSecond, now],
      );
      await insertAudit(sql, audit({ before: before.throttle_per_second, after: after.throttle_per_second }));
      return after;
    });
    if (!row) return null;
    await this.pg.sql(
      `UPDATE webhook_throttles SET next_slot_at = LEAST(next_slot_at, clock_timestamp() + interval '${THROTTLE_HORIZON_MS} milliseconds')
        WHERE application_id = $1`,
      [scope.applicationId],
    );
    let madeDue = 0;
    // Until a batch finds none: a row a claim changed while this waited for it drops out of its
    // batch, so a short batch does not prove the rest is done.
    for (;;) {
      const batch = await this.pg.sql<{ status: string }>(CLEAR_RESERVED_SLOTS_SQL, [scope.applicationId, now, THROTTLE_RESET_BATCH_SIZE]);
      if (batch.length === 0) break;
      madeDue += batch.filter((cleared) => cleared.status === 'pending').length;
    }
    if (madeDue > 0) this.notifier.deliveriesCommitted();
    return { perSecond: row.throttle_per_second };
  }
}
