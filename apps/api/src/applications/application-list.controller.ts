import { AppError, ApplicationListResponse, DEFAULT_PAGE_SIZE, OwnApplicationListQuery, page } from '@herald/contracts';
import { ApplicationRepository } from '@herald/database';
import { Controller, Get, Query, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { toApplicationDto } from '../admin/admin.service';
import { AuthenticatedRequest, RefusesPortalTokens } from '../common/auth/auth.decorators';
import { ApiErrors, AUTH_ERRORS } from '../common/swagger/api-errors.decorator';

/**
 * The applications the caller may act on (PRODUCT.md §12: "an account key sees its own
 * applications"): an account key's account's, every one for an admin key. A portal token is
 * confined to its one application and learns no other ids: 403-04 (ApiKeyGuard refuses it first).
 */
@ApiTags('applications')
@ApiSecurity('api-key')
@Controller('applications')
export class ApplicationListController {
  constructor(private readonly applications: ApplicationRepository) {}

  @Get()
  @RefusesPortalTokens()
  @ApiOperation({
    summary: 'List your applications',
    description:
      "An account key's own applications, or every application for an admin key; by id, paged with a cursor. " +
      'A portal token gets 403-04.',
  })
  @ApiOkResponse({ type: ApplicationListResponse })
  @ApiErrors(...AUTH_ERRORS, 'INVALID_PARAMETER', 'SCOPE_REQUIRED')
  async list(@Req() request: AuthenticatedRequest, @Query() query: OwnApplicationListQuery): Promise<ApplicationListResponse> {
    const principal = request.principal;
    if (!principal) throw new Error('ApplicationListController must run after ApiKeyGuard');
    if (principal.scope === 'portal') throw new AppError('SCOPE_REQUIRED', 'A portal token cannot list applications.');
    // An account key without an account would otherwise list everything: refuse it outright.
    const accountId = principal.scope === 'admin' ? undefined : principal.accountId;
    if (accountId === null) throw new Error(`API key ${principal.keyId} has scope account but no account`);
    const found = await this.applications.list({ accountId }, query.limit ?? DEFAULT_PAGE_SIZE, query.cursor ? Number(query.cursor) : null);
    return page(found.items.map(toApplicationDto), found.nextCursor);
  }
}
