import type { DisabledReason, WebhookState } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { PgPool } from '../pg-pool';
import { queueOperationalNotice } from '../events/operational-webhook.repository';
import { ApplicationScope } from '../records';
import { leased } from './queue.sql';

/** Ids for the operational notice a state change may queue (the caller's IdGenerator makes them). */
export type NoticeIds = () => { eventId: string; deliveryId: string };

/** A webhook's health as GET …/webhook/status shows it (PRODUCT.md §10). */
export interface WebhookStatusRecord {
  state: WebhookState;
  disabledAt: Date | null;
  disabledReason: DisabledReason | null;
  failingSince: Date | null;
  lastSuccessAt: Date | null;
  consecutiveFailures: number;
}

/** Deliveries paused or resumed per statement: each batch is a short transaction. */
export const HEALTH_BATCH_SIZE = 1000;

const STATUS_COLUMNS = `state, disabled_at AS "disabledAt", disabled_reason AS "disabledReason", failing_since AS "failingSince",
  last_success_at AS "lastSuccessAt", consecutive_failures AS "consecutiveFailures"`;

/**
 * One batch of an application's pending deliveries made paused, through the queue's
 * (application_id, due_at) index; one a worker holds is paused by that worker when it sees the
 * webhook disabled. A lease that has run out is taken over, as a claim would and as pauseClaimed
 * does, by clearing it: left in place, the worker that held it could still finish with a retry,
 * and its finish (which does not look at `paused`) would leave the delivery `pending` in
 * `deliveries` while its queue row stays paused. $1 application, $2 now, $3 batch size.
 */
const PAUSE_BATCH_SQL = `
  WITH batch AS (
    SELECT delivery_id FROM delivery_queue q
     WHERE application_id = $1 AND NOT paused AND destination = 'webhook' AND NOT ${leased('q', '$2')}
     LIMIT $3 FOR UPDATE SKIP LOCKED
  ), parked AS (
    UPDATE delivery_queue q SET paused = true, lease_token = NULL, lease_until = NULL
      FROM batch WHERE q.delivery_id = batch.delivery_id RETURNING q.delivery_id
  )
  UPDATE deliveries d SET status = 'paused', updated_at = $2 FROM parked WHERE d.id = parked.delivery_id
  RETURNING d.id`;

/**
 * One batch of an application's paused deliveries made due again. Each becomes due at its
 * creation time: all are due at once, and the claim (ordered by due_at) takes them
 * oldest first, ahead of what was published since. Attempts made are kept, so each goes on
 * with the rest of its schedule. $1 application, $2 now, $3 batch size.
 */
const RESUME_BATCH_SQL = `
  WITH batch AS (
    SELECT delivery_id FROM delivery_queue WHERE application_id = $1 AND paused LIMIT $3 FOR UPDATE SKIP LOCKED
  ), resumed AS (
    UPDATE deliveries d SET status = 'pending', next_attempt_at = d.created_at, updated_at = $2
      FROM batch WHERE d.id = batch.delivery_id
    RETURNING d.id, d.created_at
  )
  UPDATE delivery_queue q SET paused = false, due_at = r.created_at FROM resumed r WHERE q.delivery_id = r.id
  RETURNING q.delivery_id`;

/**
 * Endpoint state (PRODUCT.md §10): disabling pauses an application's deliveries, enabling
 * resumes them; nothing is dropped. The worker keeps the failure streak (`finish`) and a
 * delivery claimed for a disabled webhook is paused there too, so a delivery that slipped past
 * a batch (published as the state changed, or locked by a worker) still ends up paused.
 * Only the pool, never Prisma: the worker's auto-disable uses it too.
 */
@Injectable()
export class WebhookHealthRepository {
  constructor(
    private readonly pg: PgPool,
    private readonly notifier: DeliveryNotifier,
  ) {}

  /** Null when the application has no webhook. */
  async status(scope: ApplicationScope): Promise<WebhookStatusRecord | null> {
    const [row] = await this.pg.sql<WebhookStatusRecord>(`SELECT ${STATUS_COLUMNS} FROM webhooks WHERE application_id = $1`, [
      scope.applicationId,
    ]);
    return row ?? null;
  }

  /**
   * Disables the webhook (if it is active), queues `webhook.disabled` for the operational
   * webhook in the same transaction, and pauses its pending deliveries in batches. A webhook
   * already disabled keeps its reason and time, and nothing is queued. Null when there is no webhook.
   */
  async disable(scope: ApplicationScope, reason: DisabledReason, now: Date, noticeIds: NoticeIds): Promise<WebhookStatusRecord | null> {
    const disabled = await this.disableOne(scope.applicationId, { reason, now, noticeIds });
    const status = await this.status(scope);
    if (status?.state === 'disabled') await this.inBatches(PAUSE_BATCH_SQL, scope.applicationId, now);
    if (disabled) this.notifier.deliveriesCommitted();
    return status;
  }

  /**
   * Enables the webhook, with a clean failure streak (so it is not disabled again at once),
   * queues `webhook.enabled` in the same transaction, and resumes its paused deliveries oldest
   * first. Null when there is no webhook.
   */
  async enable(scope: ApplicationScope, now: Date, noticeIds: NoticeIds): Promise<WebhookStatusRecord | null> {
    const applicationId = scope.applicationId;
    const enabled = await this.pg.transaction(async (sql) => {
      const [row] = await sql<{ paused: string }>(
        `UPDATE webhooks SET state = 'active', disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, consecutive_failures = 0
          WHERE application_id = $1 AND state = 'disabled'
         RETURNING (SELECT count(*) FROM delivery_queue WHERE application_id = $1 AND paused) AS paused`,
        [applicationId],
      );
      if (!row) return false;
      const payload = { application_id: applicationId, reason: 'manual', paused_deliveries: Number(row.paused) };
      await queueOperationalNotice(sql, { ...noticeIds(), type: 'webhook.enabled', applicationId, payload, at: now });
      return true;
    });
    const status = await this.status(scope);
    const resumed = status?.state === 'active' ? await this.inBatches(RESUME_BATCH_SQL, applicationId, now) : 0;
    if (enabled || resumed > 0) this.notifier.deliveriesCommitted();
    return status;
  }

  /**
   * Auto-disable: every active webhook whose attempts have all failed since at least
   * `failingSinceBefore`, with at least `minFailures` of them, is disabled as `failing` (with
   * its `webhook.disabled` notice) and its pending deliveries paused. Returns the applications
   * disabled. Each is disabled in its own transaction, checked again under its row lock.
   */
  async disableFailing(now: Date, failingSinceBefore: Date, minFailures: number, noticeIds: NoticeIds): Promise<number[]> {
    const candidates = await this.pg.sql<{ application_id: number }>(
      `SELECT application_id FROM webhooks WHERE state = 'active' AND failing_since <= $1 AND consecutive_failures >= $2`,
      [failingSinceBefore, minFailures],
    );
    const disabled: number[] = [];
    for (const candidate of candidates) {
      const applicationId = Number(candidate.application_id);
      if (!(await this.disableOne(applicationId, { reason: 'failing', now, noticeIds, failingSinceBefore, minFailures }))) continue;
      await this.inBatches(PAUSE_BATCH_SQL, applicationId, now);
      disabled.push(applicationId);
    }
    if (disabled.length > 0) this.notifier.deliveriesCommitted();
    return disabled;
  }

  /** The state change and its notice, in one transaction; false when the webhook was not (or no longer) to be disabled. */
  private async disableOne(
    applicationId: number,
    change: { reason: DisabledReason; now: Date; noticeIds: NoticeIds; failingSinceBefore?: Date; minFailures?: number },
  ): Promise<boolean> {
    return this.pg.transaction(async (sql) => {
      const [row] = await sql<{ failing_since: Date | null; consecutive_failures: number }>(
        `UPDATE webhooks SET state = 'disabled', disabled_at = $2, disabled_reason = $3
          WHERE application_id = $1 AND state = 'active'
            AND ($4::timestamptz IS NULL OR (failing_since <= $4 AND consecutive_failures >= $5))
         RETURNING failing_since, consecutive_failures`,
        [applicationId, change.now, change.reason, change.failingSinceBefore ?? null, change.minFailures ?? 0],
      );
      if (!row) return false;
      const payload = {
        application_id: applicationId,
        reason: change.reason,
        failing_since: row.failing_since?.toISOString() ?? null,
        consecutive_failures: Number(row.consecutive_failures),
      };
      await queueOperationalNotice(sql, { ...change.noticeIds(), type: 'webhook.disabled', applicationId, payload, at: change.now });
      return true;
    });
  }

  /** Runs a batch statement until a batch changes fewer rows than its size; returns the rows changed. */
  private async inBatches(statement: string, applicationId: number, now: Date): Promise<number> {
    let changed = 0;
    for (;;) {
      const rows = await this.pg.sql(statement, [applicationId, now, HEALTH_BATCH_SIZE]);
      changed += rows.length;
      if (rows.length < HEALTH_BATCH_SIZE) return changed;
    }
  }
}
