import { Injectable } from '@nestjs/common';
import { API_KEY_CHANNEL } from '../notifications/channel-listener';
import { PgPool } from '../pg-pool';
import { PrismaService } from '../prisma.service';
import { ApiKeyRecord, ApiKeyScope, Page, pageOf } from '../records';

/** The row that HERALD_ADMIN_KEY maps to: one, so changing the variable retires the old key. */
export const BOOTSTRAP_ADMIN_KEY_ID = 'key_bootstrap_admin';

const SELECT = { id: true, accountId: true, scope: true, name: true, prefix: true, createdAt: true, revokedAt: true } as const;

@Injectable()
export class ApiKeyRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly pg: PgPool,
  ) {}

  async create(key: {
    id: string;
    accountId: string | null;
    scope: ApiKeyScope;
    name: string;
    prefix: string;
    keyHash: string;
  }): Promise<ApiKeyRecord> {
    return this.prisma.apiKey.create({ data: key, select: SELECT });
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
   * to drop it from its cache. Null when there is no such key.
   */
  async revoke(id: string, now: Date): Promise<ApiKeyRecord | null> {
    await this.pg.sql(
      `WITH revoked AS (UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id)
       SELECT pg_notify($3, id)::text FROM revoked`,
      [now, id, API_KEY_CHANNEL],
    );
    return this.prisma.apiKey.findUnique({ where: { id }, select: SELECT });
  }

  /** Changing the bootstrap key retires the old one in every api process too. */
  async upsertBootstrapAdmin(keyHash: string, prefix: string): Promise<void> {
    const fields = { scope: 'admin' as const, name: 'HERALD_ADMIN_KEY', prefix, keyHash, revokedAt: null, accountId: null };
    await this.prisma.apiKey.upsert({
      where: { id: BOOTSTRAP_ADMIN_KEY_ID },
      create: { id: BOOTSTRAP_ADMIN_KEY_ID, ...fields },
      update: fields,
    });
    await this.pg.sql(`SELECT pg_notify($1, $2)::text`, [API_KEY_CHANNEL, BOOTSTRAP_ADMIN_KEY_ID]);
  }
}
