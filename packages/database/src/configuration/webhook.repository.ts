import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PgPool, preparedStatement } from '../pg-pool';
import { PrismaService } from '../prisma.service';
import { ApplicationScope, WebhookRecord } from '../records';
import { destinationHost, toWebhookRecord, WEBHOOK_SELECT, webhookColumns, WebhookRow } from './webhook.sql';

/** Prepared: parsed and planned once per connection, it is the configuration API's busiest statement. */
const UPSERT_SQL = preparedStatement(
  'upsert_webhook',
  `WITH saved AS (
       INSERT INTO webhooks (application_id, url, destination_host, retry_enabled, retry_value, max_retries, backoff_type,
                             backoff_value, headers)
       VALUES ($1, $2, $3, $4::smallint, $5, $6, $7::backoff_type, $8, $9::json)
       ON CONFLICT (application_id) DO UPDATE SET
         url = excluded.url, destination_host = excluded.destination_host, retry_enabled = excluded.retry_enabled,
         retry_value = excluded.retry_value,
         max_retries = excluded.max_retries, backoff_type = excluded.backoff_type,
         backoff_value = excluded.backoff_value, headers = excluded.headers, updated_at = now()
       RETURNING *, (xmax = 0) AS created
     ), first_secret AS (
       INSERT INTO webhook_secrets (id, application_id, secret)
       SELECT $10, application_id, $11 FROM saved WHERE created
     )
     SELECT ${webhookColumns('saved')} FROM saved`,
);

@Injectable()
export class WebhookRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly pg: PgPool,
  ) {}

  async find(scope: ApplicationScope): Promise<WebhookRecord | null> {
    const row = await this.prisma.webhook.findUnique({ where: { applicationId: scope.applicationId }, select: WEBHOOK_SELECT });
    return row ? toWebhookRecord(row) : null;
  }

  /**
   * Creates or replaces the configuration in one statement. A webhook row that is new gets its
   * first signing secret in the same statement, so concurrent first writes cannot create two.
   * On the pg pool: the busiest write of the configuration API (bench api-write).
   */
  async upsert(scope: ApplicationScope, webhook: WebhookRecord, firstSecret: { id: string; secret: string }): Promise<WebhookRecord> {
    const { url, retryEnabled, retryPolicy: policy, headers } = webhook;
    const rows = await this.pg.sql<WebhookRow>(UPSERT_SQL, [
      scope.applicationId,
      url,
      destinationHost(url),
      retryEnabled,
      policy.retryValue,
      policy.maxRetries,
      policy.backoffType,
      policy.backoffValue,
      JSON.stringify(headers),
      firstSecret.id,
      firstSecret.secret,
    ]);
    return toWebhookRecord(rows[0]);
  }

  /** Removes the webhook with its subscriptions and secrets (they cascade); returns what was removed. */
  async delete(scope: ApplicationScope): Promise<WebhookRecord | null> {
    try {
      return toWebhookRecord(await this.prisma.webhook.delete({ where: { applicationId: scope.applicationId }, select: WEBHOOK_SELECT }));
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') return null;
      throw error;
    }
  }

  async exists(scope: ApplicationScope): Promise<boolean> {
    return (await this.prisma.webhook.count({ where: { applicationId: scope.applicationId } })) > 0;
  }

  /** The secret new signatures start with; null when no webhook is configured. */
  async currentSecret(scope: ApplicationScope): Promise<string | null> {
    const row = await this.prisma.webhookSecret.findFirst({
      where: { applicationId: scope.applicationId, expiresAt: null },
      orderBy: { createdAt: 'desc' },
      select: { secret: true },
    });
    return row?.secret ?? null;
  }

  /**
   * Makes `next` the current secret; the one it replaces keeps signing until `retiredUntil`.
   * Secrets whose grace has run out are removed. Null when no webhook is configured.
   *
   * The webhook row is locked first, in its own statement: under READ COMMITTED each later
   * statement then sees what a rotation that held the lock before us committed. (One CTE
   * statement would keep the snapshot it took before waiting and leave two current secrets.)
   */
  async rotateSecret(scope: ApplicationScope, next: { id: string; secret: string }, now: Date, retiredUntil: Date): Promise<string | null> {
    const applicationId = scope.applicationId;
    return this.pg.transaction(async (sql) => {
      const locked = await sql(`SELECT 1 FROM webhooks WHERE application_id = $1 FOR UPDATE`, [applicationId]);
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
      return next.secret;
    });
  }
}
