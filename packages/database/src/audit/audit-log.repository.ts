import type { AuditAction } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { PgPool } from '../pg-pool';
import { ApplicationScope, Page } from '../records';
import { AUDIT_ROW_COLUMNS, AuditEntry, AuditRecordRow, toAuditEntry } from './audit.sql';

/** What the admin route may narrow the log to; every filter is optional. */
export interface AuditFilter {
  accountId?: string;
  applicationId?: number;
  action?: AuditAction;
}

/**
 * The audit log's read side (PRODUCT.md §16), typed SQL on the pool like the event log. Records
 * are written by the repository of each change, in its transaction (audit.sql.ts); nothing here
 * changes or removes one (retention does, housekeeping/).
 */
@Injectable()
export class AuditLogRepository {
  constructor(private readonly pg: PgPool) {}

  /** One application's records, newest first (the `(application_id, id)` index read backwards). */
  async listForApplication(
    scope: ApplicationScope,
    filter: { action?: AuditAction },
    limit: number,
    before: string | null,
  ): Promise<Page<AuditEntry>> {
    return this.list({ applicationId: scope.applicationId, action: filter.action }, limit, before);
  }

  /**
   * Every record, or those of one account, application or action, newest first; the cursor is the
   * last id of the previous page (ids are time-ordered). An action alone is read along the
   * primary key and filtered: the log is small next to events, and its reader is a person.
   */
  async list(filter: AuditFilter, limit: number, before: string | null): Promise<Page<AuditEntry>> {
    const values: unknown[] = [limit + 1];
    const conditions: string[] = [];
    if (filter.applicationId !== undefined) conditions.push(`application_id = $${values.push(filter.applicationId)}`);
    if (filter.accountId !== undefined) conditions.push(`account_id = $${values.push(filter.accountId)}`);
    if (filter.action !== undefined) conditions.push(`action = $${values.push(filter.action)}`);
    if (before !== null) conditions.push(`id < $${values.push(before)}`);
    const rows = await this.pg.sql<AuditRecordRow>(
      `SELECT ${AUDIT_ROW_COLUMNS} FROM audit_log
        ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
        ORDER BY id DESC
        LIMIT $1`,
      values,
    );
    const items = rows.slice(0, limit).map(toAuditEntry);
    return { items, nextCursor: rows.length > limit ? items[items.length - 1].id : null };
  }
}
