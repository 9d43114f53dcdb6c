import { APPLICATION_ID_MAX } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { AuditOf } from '../audit/audit.sql';
import { createAudit } from './audit-record';
import { classifyDatabaseError } from '../database-errors';
import { PgPool } from '../pg-pool';
import { PrismaService } from '../prisma.service';
import { ApplicationRecord, ApplicationScope, Page, pageOf } from '../records';

/** Concurrent creations without an id can pick the same next id; the loser simply tries again. */
const ID_ATTEMPTS = 5;

@Injectable()
export class ApplicationRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly pg: PgPool,
  ) {}

  async findById(id: number): Promise<ApplicationRecord | null> {
    return this.prisma.application.findUnique({
      where: { id },
      select: { id: true, accountId: true, name: true },
    });
  }

  /** By id, ascending, optionally one account's; the cursor is the last id of the previous page. */
  async list(filter: { accountId?: string }, limit: number, after: number | null): Promise<Page<ApplicationRecord>> {
    const rows = await this.prisma.application.findMany({
      where: { ...(filter.accountId ? { accountId: filter.accountId } : {}), ...(after === null ? {} : { id: { gt: after } }) },
      orderBy: { id: 'asc' },
      take: limit + 1,
      select: { id: true, accountId: true, name: true },
    });
    return pageOf(rows, limit, (row) => String(row.id));
  }

  /** The only place an ApplicationScope is made: call it after checking the caller owns `application`. */
  scopeOf(application: ApplicationRecord): ApplicationScope {
    return { applicationId: application.id, accountId: application.accountId } as ApplicationScope;
  }

  /**
   * Creates an application with the platform's id, or with the next free one when none is given,
   * with the audit record `audit` makes of it, in one transaction. `id_taken`: the platform's id is
   * in use; `ids_exhausted`: no id is free.
   */
  async create(
    application: { id: number | null; accountId: string; name: string },
    audit: AuditOf<ApplicationRecord>,
  ): Promise<ApplicationRecord | 'id_taken' | 'ids_exhausted'> {
    for (let attempt = 1; ; attempt++) {
      const id = application.id ?? (await this.nextFreeId());
      if (id === null) return 'ids_exhausted';
      try {
        return await this.prisma.$transaction(async (tx) => {
          const created = await tx.application.create({
            data: { id, accountId: application.accountId, name: application.name },
            select: { id: true, accountId: true, name: true },
          });
          await createAudit(tx, audit(created));
          return created;
        });
      } catch (error) {
        if (classifyDatabaseError(error) !== 'unique_violation') throw error;
        if (application.id !== null) return 'id_taken';
        if (attempt >= ID_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * One above the highest id in use; once the highest possible id is taken, the lowest free
   * one (null when none is). Platform-chosen ids can leave any pattern, so "free" is checked,
   * never assumed.
   */
  private async nextFreeId(): Promise<number | null> {
    const [{ next }] = await this.pg.sql<{ next: number | null }>(
      `SELECT COALESCE(
         (SELECT max(id) + 1 FROM applications HAVING max(id) < $1),
         (SELECT candidate.id FROM (SELECT 1 AS id UNION ALL SELECT id + 1 FROM applications WHERE id < $1) candidate
           WHERE NOT EXISTS (SELECT 1 FROM applications taken WHERE taken.id = candidate.id)
           ORDER BY candidate.id LIMIT 1)
       ) AS next`,
      [APPLICATION_ID_MAX],
    );
    return next === null ? null : Number(next);
  }
}
