import { Injectable } from '@nestjs/common';
import { AuditEntry, AuditOf, insertAudit } from '../audit/audit.sql';
import { auditCreateData } from './audit-record';
import { API_KEY_CHANNEL } from '../notifications/channel-listener';
import { PgPool } from '../pg-pool';
import { PrismaService } from '../prisma.service';
import { ApplicationScope } from '../records';

/** A customer portal link (PRODUCT.md §12); never its token, which is shown once and not stored. */
export interface PortalLinkRecord {
  id: string;
  applicationId: number;
  expiresAt: Date;
  createdAt: Date;
  revokedAt: Date | null;
}

/** A link a request may use, with the account of its application (the access guard compares it). */
export interface UsablePortalLinkRecord extends PortalLinkRecord {
  accountId: string;
}

const SELECT = { id: true, applicationId: true, expiresAt: true, createdAt: true, revokedAt: true } as const;

@Injectable()
export class PortalLinkRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly pg: PgPool,
  ) {}

  /** The link and its audit record, in one transaction. */
  async create(
    scope: ApplicationScope,
    link: { id: string; tokenHash: string; expiresAt: Date; createdAt: Date },
    audit: AuditEntry,
  ): Promise<PortalLinkRecord> {
    const [created] = await this.prisma.$transaction([
      this.prisma.portalLink.create({ data: { ...link, applicationId: scope.applicationId }, select: SELECT }),
      this.prisma.auditRecord.create({ data: auditCreateData(audit), select: { id: true } }),
    ]);
    return created;
  }

  /**
   * The link a request presents, if it is neither revoked nor expired at `now` (the caller's
   * clock, so an injected clock decides expiry the same way everywhere).
   */
  async findUsableByHash(tokenHash: string, now: Date): Promise<UsablePortalLinkRecord | null> {
    const link = await this.prisma.portalLink.findFirst({
      where: { tokenHash, revokedAt: null, expiresAt: { gt: now } },
      select: { ...SELECT, application: { select: { accountId: true } } },
    });
    if (!link) return null;
    const { application, ...record } = link;
    return { ...record, accountId: application.accountId };
  }

  /**
   * Revokes every link of the application that still works at `now` and tells every api process
   * to drop them from its cache (NOTIFY on the api keys' channel, with each link's id, in the
   * same statement). Links already expired or revoked are left as they are. The audit record
   * `audit` makes of the ids revoked is written in the same transaction. The ids revoked.
   */
  async revokeAll(scope: ApplicationScope, now: Date, audit: AuditOf<string[]>): Promise<string[]> {
    return this.pg.transaction(async (sql) => {
      const rows = await sql<{ id: string }>(
        `WITH revoked AS (
           UPDATE portal_links SET revoked_at = $2
            WHERE application_id = $1 AND revoked_at IS NULL AND expires_at > $2
         RETURNING id
       )
       SELECT id, pg_notify($3, id)::text AS notified FROM revoked ORDER BY id`,
        [scope.applicationId, now, API_KEY_CHANNEL],
      );
      const revoked = rows.map((row) => row.id);
      await insertAudit(sql, audit(revoked));
      return revoked;
    });
  }
}
