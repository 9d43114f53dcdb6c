import { Injectable } from '@nestjs/common';
import { AuditEntry, AuditOf, insertAudit } from '../audit/audit.sql';
import { auditCreateData } from './audit-record';
import { API_KEY_CHANNEL } from '../notifications/channel-listener';
import { PgPool } from '../pg-pool';
import { PrismaService } from '../prisma.service';
import { ApiKeyRecord, ApiKeyScope, Page, pageOf } from '../records';

/** The row that HERALD_ADMIN_KEY maps to: one, so changing the variable retires the old key. */
export const BOOTSTRAP_ADMIN_KEY_ID = 'key_bootstrap_admin';

const SELECT = { id: true, accountId: true, scope: true, name: true, prefix: true, createdAt: true, revokedAt: true } as const;

/** The same columns in SQL, for the statements on the pool. */
const COLUMNS = `id, account_id AS "accountId", scope, name, prefix, created_at AS "createdAt", revoked_at AS "revokedAt"`;

/** Serialises start-ups applying HERALD_ADMIN_KEY, so replicas starting together record one change. */
const BOOTSTRAP_LOCK_KEY = 72_707_369_003;

@Injectable()
export class ApiKeyRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly pg: PgPool,
  ) {}

  /** The key and its audit record, in one transaction. */
  async create(
    key: { id: string; accountId: string | null; scope: ApiKeyScope; name: string; prefix: string; keyHash: string },
    audit: AuditEntry,
  ): Promise<ApiKeyRecord> {
    const [record] = await this.prisma.$transaction([
      this.prisma.apiKey.create({ data: key, select: SELECT }),
      this.prisma.auditRecord.create({ data: auditCreateData(audit), select: { id: true } }),
    ]);
    return record;
  }

  /** Newest first, optionally one account's; never the key's hash. The cursor is the last id of the previous page. */
  async list(filter: { accountId?: string }, limit: number, before: string | null): Promise<Page<ApiKeyRecord>> {
    const rows = await this.prisma.apiKey.findMany({
      where: { ...(filter.accountId ? { accountId: filter.accountId } : {}), ...(before === null ? {} : { id: { lt: before } }) },
      orderBy: { id: 'desc' },
      take: limit + 1,
      select: SELECT,
    });
    return pageOf(rows, limit, (row) => row.id);
  }

  /** A key by id, revoked or not; never its hash. */
  async findById(id: string): Promise<ApiKeyRecord | null> {
    return this.prisma.apiKey.findUnique({ where: { id }, select: SELECT });
  }

  /** The key a request presents, if it exists and is not revoked. */
  async findUsableByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    return this.prisma.apiKey.findFirst({ where: { keyHash, revokedAt: null }, select: SELECT });
  }

  /**
   * Revokes a key (idempotently: the first revocation time is kept) and tells every api process
   * to drop it from its cache, with the audit record `audit` makes of the key before and after,
   * in one transaction (the NOTIFY leaves at its commit). Null when there is no such key.
   */
  async revoke(id: string, now: Date, audit: AuditOf<{ before: ApiKeyRecord; after: ApiKeyRecord }>): Promise<ApiKeyRecord | null> {
    return this.pg.transaction(async (sql) => {
      const [before] = await sql<ApiKeyRecord>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1 FOR UPDATE`, [id]);
      if (!before) return null;
      const [revoked] = await sql<ApiKeyRecord>(
        `WITH revoked AS (UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING ${COLUMNS})
         SELECT revoked.*, pg_notify($3, revoked.id)::text AS notified FROM revoked`,
        [now, id, API_KEY_CHANNEL],
      );
      const after = revoked ? withoutNotified(revoked) : before;
      await insertAudit(sql, audit({ before, after }));
      return after;
    });
  }

  /**
   * Makes `keyHash` the bootstrap admin key's (HERALD_ADMIN_KEY) and retires the old one in every
   * api process, recording what `audit` makes of the change; a key already stored as it is
   * changes nothing and records nothing.
   */
  async upsertBootstrapAdmin(
    keyHash: string,
    prefix: string,
    audit: AuditOf<{ before: ApiKeyRecord | null; after: ApiKeyRecord }>,
  ): Promise<void> {
    await this.pg.transaction(async (sql) => {
      await sql(`SELECT pg_advisory_xact_lock($1)`, [BOOTSTRAP_LOCK_KEY]);
      const [stored] = await sql<ApiKeyRecord & { keyHash: string }>(
        `SELECT ${COLUMNS}, key_hash AS "keyHash" FROM api_keys WHERE id = $1 FOR UPDATE`,
        [BOOTSTRAP_ADMIN_KEY_ID],
      );
      if (stored && stored.keyHash === keyHash && stored.prefix === prefix && stored.revokedAt === null) return;
      const [after] = await sql<ApiKeyRecord>(
        `INSERT INTO api_keys (id, account_id, scope, name, prefix, key_hash, revoked_at)
         VALUES ($1, NULL, 'admin', 'HERALD_ADMIN_KEY', $2, $3, NULL)
         ON CONFLICT (id) DO UPDATE SET account_id = NULL, scope = 'admin', name = 'HERALD_ADMIN_KEY', prefix = $2,
                                        key_hash = $3, revoked_at = NULL
         RETURNING ${COLUMNS}`,
        [BOOTSTRAP_ADMIN_KEY_ID, prefix, keyHash],
      );
      await sql(`SELECT pg_notify($1, $2)::text`, [API_KEY_CHANNEL, BOOTSTRAP_ADMIN_KEY_ID]);
      const before = stored ? (({ keyHash: _hash, ...record }) => record)(stored) : null;
      await insertAudit(sql, audit({ before, after }));
    });
  }
}

function withoutNotified(row: ApiKeyRecord & { notified?: unknown }): ApiKeyRecord {
  const { notified: _notified, ...record } = row;
  return record;
}
