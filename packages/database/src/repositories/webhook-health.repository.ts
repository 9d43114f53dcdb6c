import type { DisabledReason, WebhookState } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { PgPool } from '../pg-pool';
import { ApplicationScope } from './records';

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

/** One batch of an application's pending deliveries made paused. $1 application, $2 now, $3 batch size. */
const PAUSE_BATCH_SQL = `
  WITH batch AS (
    SELECT id FROM deliveries WHERE application_id = $1 AND status = 'pending' LIMIT $3 FOR UPDATE SKIP LOCKED
  )
  UPDATE deliveries d SET status = 'paused', updated_at = $2 FROM batch WHERE d.id = batch.id AND d.status = 'pending'
  RETURNING d.id`;

/**
 * One batch of an application's paused deliveries made due again. Each becomes due at its
 * creation time: all are due at once, and the claim (ordered by next_attempt_at) takes them
 * oldest first, ahead of what was published since. Attempts made are kept, so each goes on
 * with the rest of its schedule. $1 application, $2 now, $3 batch size.
 */
const RESUME_BATCH_SQL = `
  WITH batch AS (
    SELECT id FROM deliveries WHERE application_id = $1 AND status = 'paused' LIMIT $3 FOR UPDATE SKIP LOCKED
  )
  UPDATE deliveries d SET status = 'pending', next_attempt_at = d.created_at, updated_at = $2
    FROM batch WHERE d.id = batch.id AND d.status = 'paused'
  RETURNING d.id`;

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
   * Disables the webhook (if it is active) and pauses its pending deliveries in batches. A
   * webhook already disabled keeps its reason and time. Null when there is no webhook.
   */
  async disable(scope: ApplicationScope, reason: DisabledReason, now: Date): Promise<WebhookStatusRecord | null> {
    await this.pg.sql(
      `UPDATE webhooks SET state = 'disabled', disabled_at = $2, disabled_reason = $3 WHERE application_id = $1 AND state = 'active'`,
      [scope.applicationId, now, reason],
    );
    const status = await this.status(scope);
    if (status?.state === 'disabled') await this.inBatches(PAUSE_BATCH_SQL, scope.applicationId, now);
    return status;
  }

  /**
   * Enables the webhook, with a clean failure streak (so it is not disabled again at once), and
   * resumes its paused deliveries oldest first. Null when there is no webhook.
   */
  async enable(scope: ApplicationScope, now: Date): Promise<WebhookStatusRecord | null> {
    await this.pg.sql(
      `UPDATE webhooks SET state = 'active', disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, consecutive_failures = 0
        WHERE application_id = $1 AND state = 'disabled'`,
      [scope.applicationId],
    );
    const status = await this.status(scope);
    if (status?.state === 'active' && (await this.inBatches(RESUME_BATCH_SQL, scope.applicationId, now)) > 0) {
      this.notifier.deliveriesCommitted();
    }
    return status;
  }

  /**
   * Auto-disable: every active webhook whose attempts have all failed since at least
   * `failingSinceBefore`, with at least `minFailures` of them, is disabled as `failing` and its
   * pending deliveries paused. Returns the applications disabled.
   */
  async disableFailing(now: Date, failingSinceBefore: Date, minFailures: number): Promise<number[]> {
    const disabled = await this.pg.sql<{ application_id: number }>(
      `UPDATE webhooks SET state = 'disabled', disabled_at = $1, disabled_reason = 'failing'
        WHERE state = 'active' AND failing_since <= $2 AND consecutive_failures >= $3
       RETURNING application_id`,
      [now, failingSinceBefore, minFailures],
    );
    for (const { application_id } of disabled) await this.inBatches(PAUSE_BATCH_SQL, Number(application_id), now);
    return disabled.map((row) => Number(row.application_id));
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
