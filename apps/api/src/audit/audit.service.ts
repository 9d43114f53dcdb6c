import { AdminAuditQuery, ApplicationAuditQuery, AuditRecordDto, DEFAULT_PAGE_SIZE } from '@herald/contracts';
import { ApplicationScope, AuditEntry, AuditLogRepository, Page } from '@herald/database';
import { Injectable } from '@nestjs/common';

/** Reading the audit log (PRODUCT.md §16); records are written by the services that make the changes. */
@Injectable()
export class AuditService {
  constructor(private readonly auditLog: AuditLogRepository) {}

  async listForApplication(scope: ApplicationScope, query: ApplicationAuditQuery): Promise<Page<AuditRecordDto>> {
    const found = await this.auditLog.listForApplication(
      scope,
      { action: query.action },
      query.limit ?? DEFAULT_PAGE_SIZE,
      query.cursor ?? null,
    );
    return { items: found.items.map(toAuditDto), nextCursor: found.nextCursor };
  }

  async list(query: AdminAuditQuery): Promise<Page<AuditRecordDto>> {
    const found = await this.auditLog.list(
      { accountId: query.account_id, applicationId: query.application_id, action: query.action },
      query.limit ?? DEFAULT_PAGE_SIZE,
      query.cursor ?? null,
    );
    return { items: found.items.map(toAuditDto), nextCursor: found.nextCursor };
  }
}

function toAuditDto(entry: AuditEntry): AuditRecordDto {
  return {
    id: entry.id,
    at: entry.at.toISOString(),
    actor: { type: entry.actor.type, id: entry.actor.id, prefix: entry.actor.prefix },
    action: entry.action,
    account_id: entry.accountId,
    application_id: entry.applicationId,
    request_id: entry.requestId,
    changes: entry.changes,
  };
}
