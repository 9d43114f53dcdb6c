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
   WHERE q.delivery_id = batch.delivery_id AND d.application_id = q.application_id AND d.id = q.delivery_id AND q.throttle_slot_at IS NOT NULL AND q.slot_reserved_at < $2
  RETURNING CASE WHEN q.paused THEN 'paused' ELSE 'pending' END AS status`;

/** A webhook's own limits: its throttle (§10) and its cap on attempts in flight (§17); null: none of its own. */
export interface WebhookLimits {
  perSecond: number | null;
  maxInFlight: number | null;
}

interface LimitsRow {
  throttle_per_second: number | null;
  max_in_flight: number | null;
}

function toLimits(row: LimitsRow): WebhookLimits {
  return { perSecond: row.throttle_per_second, maxInFlight: row.max_in_flight };
}

/**
 * A webhook's throttle (PRODUCT.md §10): at most `per_second` attempts a second reach it,
 * however many workers run, and its cap on attempts in flight (§17). The worker's claim enforces
 * both (throttle.sql.ts, CLAIM_SQL); this reads and sets them.
 */
@Injectable()
export class WebhookThrottleRepository {
  constructor(
    private readonly pg: PgPool,
    private readonly notifier: DeliveryNotifier,
  ) {}

  /** The webhook's throttle and in-flight cap (null: none of its own), or null when the application has no webhook. */
  async find(scope: ApplicationScope): Promise<WebhookLimits | null> {
    const [row] = await this.pg.sql<LimitsRow>('SELECT throttle_per_second, max_in_flight FROM webhooks WHERE application_id = $1', [
      scope.applicationId,
    ]);
    return row ? toLimits(row) : null;
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
    change: { perSecond: number | null; maxInFlight?: number | null },
    now: Date,
    audit: AuditOf<{ before: WebhookLimits; after: WebhookLimits }>,
  ): Promise<WebhookLimits | null> {
    const row = await this.pg.transaction(async (sql) => {
      const [before] = await sql<LimitsRow>(
        'SELECT throttle_per_second, max_in_flight FROM webhooks WHERE application_id = $1 FOR UPDATE',
        [scope.applicationId],
      );
      if (!before) return null;
      // $4: whether max_in_flight is to change (left out of the request: unchanged).
      const [after] = await sql<LimitsRow>(
        `UPDATE webhooks SET throttle_per_second = $2, max_in_flight = CASE WHEN $4 THEN $3::int ELSE max_in_flight END, updated_at = $5
          WHERE application_id = $1 RETURNING throttle_per_second, max_in_flight`,
        [scope.applicationId, change.perSecond, change.maxInFlight ?? null, change.maxInFlight !== undefined, now],
      );
      await insertAudit(sql, audit({ before: toLimits(before), after: toLimits(after) }));
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
    return toLimits(row);
  }
}
