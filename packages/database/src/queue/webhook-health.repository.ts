import type { DisabledReason, WebhookState } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { AuditOf, insertAudit } from '../audit/audit.sql';
import { PgPool, SqlQuery } from '../pg-pool';
import { queueOperationalNotice } from '../events/operational-webhook.repository';
import { ApplicationScope } from '../records';
import { leased, ready } from './queue.sql';

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
       -- Those in the claim's walk or blocked behind their key's head: each arm an index's.
       AND (${ready('q')} OR q.blocked)
     LIMIT $3 FOR UPDATE SKIP LOCKED
  ), parked AS (
    UPDATE delivery_queue q SET paused = true, lease_token = NULL, lease_until = NULL
      FROM batch WHERE q.delivery_id = batch.delivery_id RETURNING q.delivery_id
  )
  UPDATE deliveries d SET status = 'paused', updated_at = $2 FROM parked WHERE d.application_id = $1 AND d.id = parked.delivery_id
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
      FROM batch WHERE d.application_id = $1 AND d.id = batch.delivery_id
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
   * webhook and writes the audit record `audit` makes of it in the same transaction, and pauses
   * its pending deliveries in batches. A webhook already disabled keeps its reason and time, and
   * nothing is queued (`changed: false`). Null, and no record, when there is no webhook.
   */
  async disable(
    scope: ApplicationScope,
    reason: DisabledReason,
    now: Date,
    noticeIds: NoticeIds,
    audit: AuditOf<{ before: WebhookStatusRecord; changed: boolean }>,
  ): Promise<WebhookStatusRecord | null> {
    const applicationId = scope.applicationId;
    const disabled = await this.pg.transaction(async (sql) => {
      const before = await lockStatus(sql, applicationId);
      if (!before) return null;
      const changed = before.state === 'active' && (await disableLocked(sql, applicationId, { reason, now, noticeIds })) !== null;
      await insertAudit(sql, audit({ before, changed }));
      return changed;
    });
    if (disabled === null) return null;
    const status = await this.status(scope);
    if (status?.state === 'disabled') await this.inBatches(PAUSE_BATCH_SQL, applicationId, now);
    if (disabled) this.notifier.deliveriesCommitted();
    return status;
  }

  /**
   * Enables the webhook, with a clean failure streak (so it is not disabled again at once),
   * queues `webhook.enabled` and writes the audit record `audit` makes of it in the same
   * transaction, and resumes its paused deliveries oldest first. Null, and no record, when there
   * is no webhook.
   */
  async enable(
    scope: ApplicationScope,
    now: Date,
    noticeIds: NoticeIds,
    audit: AuditOf<{ before: WebhookStatusRecord; changed: boolean; pausedDeliveries: number }>,
  ): Promise<WebhookStatusRecord | null> {
    const applicationId = scope.applicationId;
    const enabled = await this.pg.transaction(async (sql) => {
      const before = await lockStatus(sql, applicationId);
      if (!before) return null;
      const [row] = await sql<{ paused: string }>(
        `UPDATE webhooks SET state = 'active', disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, consecutive_failures = 0,
                             failing_warned_since = NULL
          WHERE application_id = $1 AND state = 'disabled'
         RETURNING (SELECT count(*) FROM delivery_queue WHERE application_id = $1 AND paused) AS paused`,
        [applicationId],
      );
      const pausedDeliveries = row ? Number(row.paused) : 0;
      if (row) {
        const payload = { application_id: applicationId, reason: 'manual', paused_deliveries: pausedDeliveries };
        await queueOperationalNotice(sql, { ...noticeIds(), type: 'webhook.enabled', applicationId, payload, at: now });
      }
      await insertAudit(sql, audit({ before, changed: row !== undefined, pausedDeliveries }));
      return row !== undefined;
    });
    if (enabled === null) return null;
    const status = await this.status(scope);
    const resumed = status?.state === 'active' ? await this.inBatches(RESUME_BATCH_SQL, applicationId, now) : 0;
    if (enabled || resumed > 0) this.notifier.deliveriesCommitted();
    return status;
  }

  /**
   * Auto-disable: every active webhook whose attempts have all failed since at least
   * `failingSinceBefore`, with at least `minFailures` of them, is disabled as `failing` (with
   * its `webhook.disabled` notice and the audit record `audit` makes of it) and its pending
   * deliveries paused. Returns the applications disabled. Each is disabled in its own
   * transaction, checked again under its row lock.
   */
  async disableFailing(
    now: Date,
    failingSinceBefore: Date,
    minFailures: number,
    noticeIds: NoticeIds,
    audit: AuditOf<AutoDisabledWebhook>,
  ): Promise<number[]> {
    const candidates = await this.pg.sql<{ application_id: number }>(
      `SELECT application_id FROM webhooks WHERE state = 'active' AND failing_since <= $1 AND consecutive_failures >= $2`,
      [failingSinceBefore, minFailures],
    );
    const disabled: number[] = [];
    for (const candidate of candidates) {
      const applicationId = Number(candidate.application_id);
      const done = await this.pg.transaction(async (sql) => {
        const row = await disableLocked(sql, applicationId, { reason: 'failing', now, noticeIds, failingSinceBefore, minFailures });
        if (row) await insertAudit(sql, audit({ applicationId, ...row }));
        return row !== null;
      });
      if (!done) continue;
      await this.inBatches(PAUSE_BATCH_SQL, applicationId, now);
      disabled.push(applicationId);
    }
    if (disabled.length > 0) this.notifier.deliveriesCommitted();
    return disabled;
  }

  /**
   * Warnings before disabling (PRODUCT.md §16): `webhook.failing` for every active webhook whose
   * failing streak started at or before `failingSinceBefore` (half the disable window ago), once
   * per streak (`failing_warned_since` remembers which streak was warned about). `willDisableAt`
   * says when auto-disable is due for a streak. Returns the applications warned. Each in its own
   * transaction, the notice queued with the mark, so two workers warn once.
   */
  async warnFailing(
    now: Date,
    failingSinceBefore: Date,
    willDisableAt: (failingSince: Date) => Date,
    noticeIds: NoticeIds,
  ): Promise<number[]> {
    const candidates = await this.pg.sql<{ application_id: number }>(
      `SELECT application_id FROM webhooks
        WHERE state = 'active' AND failing_since <= $1 AND failing_warned_since IS DISTINCT FROM failing_since`,
      [failingSinceBefore],
    );
    const warned: number[] = [];
    for (const candidate of candidates) {
      const applicationId = Number(candidate.application_id);
      const done = await this.pg.transaction(async (sql) => {
        const [row] = await sql<{ failing_since: Date; consecutive_failures: number }>(
          `UPDATE webhooks SET failing_warned_since = failing_since
            WHERE application_id = $1 AND state = 'active' AND failing_since <= $2 AND failing_warned_since IS DISTINCT FROM failing_since
           RETURNING failing_since, consecutive_failures`,
          [applicationId, failingSinceBefore],
        );
        if (!row) return false;
        const payload = {
          application_id: applicationId,
          failing_since: row.failing_since.toISOString(),
          consecutive_failures: Number(row.consecutive_failures),
          will_disable_at: willDisableAt(row.failing_since).toISOString(),
        };
        await queueOperationalNotice(sql, { ...noticeIds(), type: 'webhook.failing', applicationId, payload, at: now });
        return true;
      });
      if (done) warned.push(applicationId);
    }
    if (warned.length > 0) this.notifier.deliveriesCommitted();
    return warned;
  }

  /**
   * `webhook.recovered` for every active webhook whose warned-about streak has ended in a success
   * (its failing_since is no longer the one warned about: null, or a later streak's); the mark is
   * cleared with the notice, in one transaction. Disabling clears the mark, so a webhook that was
   * disabled is not reported as recovered. Returns the applications reported.
   */
  async reportRecovered(now: Date, noticeIds: NoticeIds): Promise<number[]> {
    const ended = `state = 'active' AND failing_warned_since IS NOT NULL AND failing_warned_since IS DISTINCT FROM failing_since`;
    const candidates = await this.pg.sql<{ application_id: number }>(`SELECT application_id FROM webhooks WHERE ${ended}`);
    const reported: number[] = [];
    for (const candidate of candidates) {
      const applicationId = Number(candidate.application_id);
      const done = await this.pg.transaction(async (sql) => {
        const [row] = await sql<{ failing_warned_since: Date; last_success_at: Date | null }>(
          `SELECT failing_warned_since, last_success_at FROM webhooks WHERE application_id = $1 AND ${ended} FOR UPDATE`,
          [applicationId],
        );
        if (!row) return false;
        await sql(`UPDATE webhooks SET failing_warned_since = NULL WHERE application_id = $1`, [applicationId]);
        const payload = {
          application_id: applicationId,
          failing_since: row.failing_warned_since.toISOString(),
          recovered_at: row.last_success_at?.toISOString() ?? null,
        };
        await queueOperationalNotice(sql, { ...noticeIds(), type: 'webhook.recovered', applicationId, payload, at: now });
        return true;
      });
      if (done) reported.push(applicationId);
    }
    if (reported.length > 0) this.notifier.deliveriesCommitted();
    return reported;
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

/** The webhook's health, its row locked until the transaction ends; null without a webhook. */
async function lockStatus(sql: SqlQuery, applicationId: number): Promise<WebhookStatusRecord | null> {
  const [row] = await sql<WebhookStatusRecord>(`SELECT ${STATUS_COLUMNS} FROM webhooks WHERE application_id = $1 FOR UPDATE`, [
    applicationId,
  ]);
  return row ?? null;
}

/** What auto-disable recorded of a webhook it disabled. */
export interface AutoDisabledWebhook {
  applicationId: number;
  accountId: string;
  failingSince: Date | null;
  consecutiveFailures: number;
}

/**
 * The state change and its notice through `sql` (a transaction's); null when the webhook was not
 * (or no longer) to be disabled. Clears the failing warning's mark: a disabled webhook is not
 * "recovered" when it is enabled again.
 */
async function disableLocked(
  sql: SqlQuery,
  applicationId: number,
  change: { reason: DisabledReason; now: Date; noticeIds: NoticeIds; failingSinceBefore?: Date; minFailures?: number },
): Promise<Omit<AutoDisabledWebhook, 'applicationId'> | null> {
  const [row] = await sql<{ failing_since: Date | null; consecutive_failures: number; account_id: string }>(
    `UPDATE webhooks SET state = 'disabled', disabled_at = $2, disabled_reason = $3, failing_warned_since = NULL
      WHERE application_id = $1 AND state = 'active'
        AND ($4::timestamptz IS NULL OR (failing_since <= $4 AND consecutive_failures >= $5))
     RETURNING failing_since, consecutive_failures, (SELECT account_id FROM applications WHERE id = $1) AS account_id`,
    [applicationId, change.now, change.reason, change.failingSinceBefore ?? null, change.minFailures ?? 0],
  );
  if (!row) return null;
  const payload = {
    application_id: applicationId,
    reason: change.reason,
    failing_since: row.failing_since?.toISOString() ?? null,
    consecutive_failures: Number(row.consecutive_failures),
  };
  await queueOperationalNotice(sql, { ...change.noticeIds(), type: 'webhook.disabled', applicationId, payload, at: change.now });
  return { accountId: row.account_id, failingSince: row.failing_since, consecutiveFailures: Number(row.consecutive_failures) };
}
