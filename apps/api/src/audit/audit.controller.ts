import { AdminAuditQuery, ApplicationAuditQuery, AuditListResponse, page } from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { AdminOnly } from '../common/auth/auth.decorators';
import { ApiErrors, AUTH_ERRORS } from '../common/swagger/api-errors.decorator';
import { AuditService } from './audit.service';

const LIST_DESCRIPTION =
  'Newest first, paged with a cursor. One record per change to configuration or access, written in the same transaction as ' +
  'the change; `changes` names each field that changed as [before, after], never a secret, a key or an extra header’s value. ' +
  'Records are never changed or removed, except by retention (HERALD_AUDIT_RETENTION_DAYS).';

/** GET /application/{id}/audit: the application's records, for its account's keys, admin keys and its portal links. */
@ApplicationController('audit', { tag: 'audit', errors: ['INVALID_PARAMETER'] })
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({ summary: "Read the application's audit log", description: LIST_DESCRIPTION })
  @ApiOkResponse({ type: AuditListResponse })
  async list(@OwnedApplication() scope: ApplicationScope, @Query() query: ApplicationAuditQuery): Promise<AuditListResponse> {
    const found = await this.audit.listForApplication(scope, query);
    return page(found.items, found.nextCursor);
  }
}

/** GET /admin/audit: every record, for the operator. */
@ApiTags('audit')
@ApiSecurity('api-key')
@ApiErrors(...AUTH_ERRORS, 'SCOPE_REQUIRED', 'INVALID_PARAMETER')
@AdminOnly()
@Controller('admin/audit')
export class AdminAuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({
    summary: 'Read the audit log',
    description: `${LIST_DESCRIPTION} Narrowed to one account, application or action by the query.`,
  })
  @ApiOkResponse({ type: AuditListResponse })
  async list(@Query() query: AdminAuditQuery): Promise<AuditListResponse> {
    const found = await this.audit.list(query);
    return page(found.items, found.nextCursor);
  }
}
