import type { OperationalEventType } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { AuditEntry, AuditOf, auditValues, insertAudit, insertAuditFrom } from '../audit/audit.sql';
import { PgPool, SqlQuery } from '../pg-pool';
import { destinationHost } from '../configuration/webhook.sql';
import { DEQUEUED_COLUMNS, ENQUEUED_COLUMNS, cancelDequeued, enqueue, leased } from '../queue/queue.sql';

/** The operator's endpoint as stored (PRODUCT.md §10). */
export interface OperationalWebhookRecord {
  url: string;
  headers: Record<string, string>;
  createdAt: Date;
  updatedAt: Date;
}

/** A notification for the operational webhook: its ids are made by the caller's IdGenerator. */
export interface OperationalNotice {
  eventId: string;
  deliveryId: string;
  type: OperationalEventType;
  applicationId: number;
  payload: Record<string, unknown>;
  at: Date;
}

const COLUMNS = `url, headers, created_at AS "createdAt", updated_at AS "updatedAt"`;

/**
 * The event and its delivery to the operational webhook, in one statement — only when one is
 * configured (else nothing is stored). Run in the same transaction as the change it reports, so
 * the notice is queued exactly when the change commits: at least once, through the same engine.
 * $1 event id, $2 application, $3 type, $4 payload, $5 time, $6 delivery id.
 */
const NOTICE_SQL = `
  WITH event AS (
    INSERT INTO events (id, application_id, event_type, payload, created_at)
    SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM operational_webhook)
    RETURNING id
  ), delivery AS (
    INSERT INTO deliveries (id, event_id, application_id, event_type, status, destination, ignores_subscription,
                            next_attempt_at, created_at, updated_at)
    SELECT $6, id, $2, $3, 'pending', 'operational', true, $5, $5, $5 FROM event
    RETURNING ${ENQUEUED_COLUMNS}
  )
  ${enqueue('delivery')}
  RETURNING delivery_id`;

/** Queues `notice` through `sql` (a transaction's); true when an operational webhook is there to receive it. */
export async function queueOperationalNotice(sql: SqlQuery, notice: OperationalNotice): Promise<boolean> {
  const rows = await sql(NOTICE_SQL, [
    notice.eventId,
    notice.applicationId,
    notice.type,
    JSON.stringify(notice.payload),
    notice.at,
    notice.deliveryId,
  ]);
  return rows.length > 0;
}

/** The operational webhook's configuration (admin routes). Pool only: the worker reads it in its context query. */
@Injectable()
export class OperationalWebhookRepository {
  constructor(
    private readonly pg: PgPool,
    private readonly notifier: DeliveryNotifier,
  ) {}

  async find(): Promise<OperationalWebhookRecord | null> {
    const [row] = await this.pg.sql<OperationalWebhookRecord>(`SELECT ${COLUMNS} FROM operational_webhook WHERE id = 1`);
    return row ?? null;
  }

  /**
   * Creates or replaces it, with the audit record `audit` makes of it before and after, in one
   * transaction; a new one gets `firstSecret`, a replaced one keeps its secret. Its one row is
   * locked first (or, while there is none, the transaction lock every writer of it takes), so
   * `before` is exactly what this replaced.
   */
  async upsert(
    webhook: { url: string; headers: Record<string, string> },
    firstSecret: string,
    now: Date,
    audit: AuditOf<{ before: OperationalWebhookRecord | null; after: OperationalWebhookRecord }>,
  ): Promise<OperationalWebhookRecord> {
    return this.pg.transaction(async (sql) => {
      const before = await lockOperationalWebhook(sql);
      const [after] = await sql<OperationalWebhookRecord>(
        `INSERT INTO operational_webhook (id, url, destination_host, headers, secret, created_at, updated_at)
         VALUES (1, $1, $2, $3::json, $4, $5, $5)
         ON CONFLICT (id) DO UPDATE SET url = excluded.url, destination_host = excluded.destination_host,
                                        headers = excluded.headers, updated_at = excluded.updated_at
         RETURNING ${COLUMNS}`,
        [webhook.url, destinationHost(webhook.url), JSON.stringify(webhook.headers), firstSecret, now],
      );
      await insertAudit(sql, audit({ before, after }));
      return after;
    });
  }

  /**
   * Removes it and cancels the notices still waiting to be sent to it (there is nowhere to send
   * them), with the audit record `audit` makes of what was removed; returns what was removed, or
   * null (and no record) when there was none.
   */
  async delete(now: Date, audit: AuditOf<OperationalWebhookRecord>): Promise<OperationalWebhookRecord | null> {
    return this.pg.transaction(async (sql) => {
      await lockOperationalWebhook(sql);
      const [row] = await sql<OperationalWebhookRecord>(`DELETE FROM operational_webhook WHERE id = 1 RETURNING ${COLUMNS}`);
      if (!row) return null;
      await sql(
        cancelDequeued(
          `DELETE FROM delivery_queue q WHERE q.destination = 'operational' AND NOT ${leased('q', '$1')} RETURNING ${DEQUEUED_COLUMNS}`,
          '$1',
        ),
        [now],
      );
      await insertAudit(sql, audit(row));
      return row;
    });
  }

  /** Its signing secret; Herald's own read (tests): a caller's goes through revealSecret. */
  async secret(): Promise<string | null> {
    const [row] = await this.pg.sql<{ secret: string }>(`SELECT secret FROM operational_webhook WHERE id = 1`);
    return row?.secret ?? null;
  }

  /** Its signing secret, with the audit record of that read, in one statement; null (and no record) when there is none. */
  async revealSecret(audit: AuditEntry): Promise<string | null> {
    const [row] = await this.pg.sql<{ secret: string }>(
      `WITH current AS (SELECT secret FROM operational_webhook WHERE id = 1), audited AS (${insertAuditFrom('current', 1)})
       SELECT secret FROM current`,
      auditValues(audit),
    );
    return row?.secret ?? null;
  }

  /** Queues a notice on its own (outside another change's transaction) and wakes the workers. */
  async notify(notice: OperationalNotice): Promise<boolean> {
    const queued = await queueOperationalNotice(this.pg.sql, notice);
    if (queued) this.notifier.deliveriesCommitted();
    return queued;
  }
}

/** Every writer of the operational webhook takes this transaction lock first: its one row may not exist yet to lock. */
const OPERATIONAL_WEBHOOK_LOCK_KEY = 72_707_369_004;

/** The operational webhook as it is now, with no other writer until the transaction ends. */
async function lockOperationalWebhook(sql: SqlQuery): Promise<OperationalWebhookRecord | null> {
  await sql(`SELECT pg_advisory_xact_lock($1)`, [OPERATIONAL_WEBHOOK_LOCK_KEY]);
  const [row] = await sql<OperationalWebhookRecord>(`SELECT ${COLUMNS} FROM operational_webhook WHERE id = 1`);
  return row ?? null;
}
