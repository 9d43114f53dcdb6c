import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PgPool, preparedStatement } from '../pg-pool';
import { AuditEntry, AuditOf, auditValues, insertAudit, insertAuditFrom } from '../audit/audit.sql';
import { createAudit } from './audit-record';
import { PrismaService } from '../prisma.service';
import { ApplicationScope, WebhookRecord } from '../records';
import { destinationHost, toWebhookRecord, WEBHOOK_SELECT, webhookColumns, WebhookRow } from './webhook.sql';

const FIND_SQL = preparedStatement('find_webhook', `SELECT ${webhookColumns('w')} FROM webhooks w WHERE w.application_id = $1`);

/** The new configuration's columns, $1 … $9 of both statements below. */
const COLUMN_VALUES = `$1, $2, $3, $4::smallint, $5, $6, $7::backoff_type, $8, $9::json`;

/**
 * The first configuration of an application, with its first signing secret and its audit record
 * (parameters $12 …), in one statement; nothing when a webhook exists already (made meanwhile).
 * Prepared: parsed and planned once per connection, it and the next are the configuration API's
 * busiest statements (bench api-write).
 */
const CREATE_SQL = preparedStatement(
  'create_webhook',
  `WITH saved AS (
       INSERT INTO webhooks (application_id, url, destination_host, retry_enabled, retry_value, max_retries, backoff_type,
                             backoff_value, headers)
       VALUES (${COLUMN_VALUES})
       ON CONFLICT (application_id) DO NOTHING
       RETURNING *
     ), first_secret AS (
       INSERT INTO webhook_secrets (id, application_id, secret) SELECT $10, application_id, $11 FROM saved
     ), audited AS (
       ${insertAuditFrom('saved', 12)}
     )
     SELECT ${webhookColumns('saved')} FROM saved`,
);

/**
 * A new configuration in place of `expected` ($10 … $16), with its audit record ($17 …), in one
 * statement; nothing when the stored one is no longer `expected` (another request changed or
 * removed it), so the record's `before` is always what was replaced. Headers compare as jsonb:
 * as maps, whatever their order.
 */
const REPLACE_SQL = preparedStatement(
  'replace_webhook',
  `WITH saved AS (
       UPDATE webhooks w SET (url, destination_host, retry_enabled, retry_value, max_retries, backoff_type, backoff_value, headers)
                           = ($2, $3, $4::smallint, $5, $6, $7::backoff_type, $8, $9::json), updated_at = now(),
                           config_version = nextval('webhooks_config_version_seq')
        WHERE w.application_id = $1
          AND (w.url, w.retry_enabled, w.retry_value, w.max_retries, w.backoff_type, w.backoff_value)
            = ($10, $11::smallint, $12, $13, $14::backoff_type, $15)
          AND w.headers::jsonb = $16::jsonb
       RETURNING w.*
     ), audited AS (
       ${insertAuditFrom('saved', 17)}
     )
     SELECT ${webhookColumns('saved')} FROM saved`,
);

@Injectable()
export class WebhookRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly pg: PgPool,
  ) {}

  /**
   * On the pool, prepared: every PUT reads the configuration it replaces (its audit record's
   * `before`) just before writing, so this is as busy as the write.
   */
  async find(scope: ApplicationScope): Promise<WebhookRecord | null> {
    const [row] = await this.pg.sql<WebhookRow>(FIND_SQL, [scope.applicationId]);
    return row ? toWebhookRecord(row) : null;
  }

  /**
   * Stores `webhook` in place of `expected` (what the caller read; null: none yet) with the audit
   * record of that change, in one statement. A webhook row that is new gets its first signing
   * secret in the same statement, so concurrent first writes cannot create two. `changed` when the
   * stored configuration is no longer `expected`, and nothing is written: read it again and
   * record against that. On the pg pool: the busiest write of the configuration API (bench api-write).
   */
  async upsert(
    scope: ApplicationScope,
    webhook: WebhookRecord,
    expected: WebhookRecord | null,
    firstSecret: { id: string; secret: string },
    audit: AuditEntry,
  ): Promise<WebhookRecord | 'changed'> {
    const values = columnValues(scope, webhook);
    const rows = expected
      ? await this.pg.sql<WebhookRow>(REPLACE_SQL, [
          ...values,
          expected.url,
          expected.retryEnabled,
          expected.retryPolicy.retryValue,
          expected.retryPolicy.maxRetries,
          expected.retryPolicy.backoffType,
          expected.retryPolicy.backoffValue,
          JSON.stringify(expected.headers),
          ...auditValues(audit),
        ])
      : await this.pg.sql<WebhookRow>(CREATE_SQL, [...values, firstSecret.id, firstSecret.secret, ...auditValues(audit)]);
    return rows.length === 0 ? 'changed' : toWebhookRecord(rows[0]);
  }

  /**
   * Removes the webhook with its subscriptions and secrets (they cascade), with the audit record
   * `audit` makes of what was removed, in one transaction; returns what was removed.
   */
  async delete(scope: ApplicationScope, audit: AuditOf<WebhookRecord>): Promise<WebhookRecord | null> {
    try {
      return await this.prisma.$transaction(async (tx) => {
        const removed = toWebhookRecord(await tx.webhook.delete({ where: { applicationId: scope.applicationId }, select: WEBHOOK_SELECT }));
        await createAudit(tx, audit(removed));
        return removed;
      });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') return null;
      throw error;
    }
  }

  async exists(scope: ApplicationScope): Promise<boolean> {
    return (await this.prisma.webhook.count({ where: { applicationId: scope.applicationId } })) > 0;
  }

  /** The secret new signatures start with; null when no webhook is configured. Herald's own read (tests): a caller's goes through revealSecret. */
  async currentSecret(scope: ApplicationScope): Promise<string | null> {
    return (await this.prisma.webhookSecret.findFirst(currentSecretQuery(scope)))?.secret ?? null;
  }

  /** The current secret for a caller, with the audit record of that read, in one transaction; null (and no record) without a webhook. */
  async revealSecret(scope: ApplicationScope, audit: AuditEntry): Promise<string | null> {
    return this.prisma.$transaction(async (tx) => {
      const row = await tx.webhookSecret.findFirst(currentSecretQuery(scope));
      if (!row) return null;
      await createAudit(tx, audit);
      return row.secret;
    });
  }

  /**
   * Makes `next` the current secret; the one it replaces keeps signing until `retiredUntil`.
   * Secrets whose grace has run out are removed. The audit record is written in the same
   * transaction. Null (and no record) when no webhook is configured.
   *
   * The webhook row is locked first, in its own statement, which also renumbers its configuration
   * (workers keep secrets by that number): under READ COMMITTED each later statement then sees
   * what a rotation that held the lock before us committed. (One CTE statement would keep the
   * snapshot it took before waiting and leave two current secrets.)
   */
  async rotateSecret(
    scope: ApplicationScope,
    next: { id: string; secret: string },
    now: Date,
    retiredUntil: Date,
    audit: AuditEntry,
  ): Promise<string | null> {
    const applicationId = scope.applicationId;
    return this.pg.transaction(async (sql) => {
      const locked = await sql(
        `UPDATE webhooks SET config_version = nextval('webhooks_config_version_seq') WHERE application_id = $1 RETURNING 1`,
        [applicationId],
      );
      if (locked.length === 0) return null;
      await sql(`DELETE FROM webhook_secrets WHERE application_id = $1 AND expires_at IS NOT NULL AND expires_at <= $2`, [
        applicationId,
        now,
      ]);
      await sql(`UPDATE webhook_secrets SET expires_at = $2 WHERE application_id = $1 AND expires_at IS NULL`, [
        applicationId,
        retiredUntil,
      ]);
      await sql(`INSERT INTO webhook_secrets (id, application_id, secret, created_at) VALUES ($1, $2, $3, $4)`, [
        next.id,
        applicationId,
        next.secret,
        now,
      ]);
      await insertAudit(sql, audit);
      return next.secret;
    });
  }
}

function columnValues(scope: ApplicationScope, webhook: WebhookRecord): unknown[] {
  const { url, retryEnabled, retryPolicy: policy, headers } = webhook;
  return [
    scope.applicationId,
    url,
    destinationHost(url),
    retryEnabled,
    policy.retryValue,
    policy.maxRetries,
    policy.backoffType,
    policy.backoffValue,
    JSON.stringify(headers),
  ];
}

function currentSecretQuery(scope: ApplicationScope) {
  return {
    where: { applicationId: scope.applicationId, expiresAt: null },
    orderBy: { createdAt: 'desc' as const },
    select: { secret: true },
  };
}
