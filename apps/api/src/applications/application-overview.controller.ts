import { ApplicationOverviewResponse, ok } from '@herald/contracts';
import { AccountRepository, ApplicationRepository, ApplicationScope } from '@herald/database';
import { Get, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { AuthenticatedRequest } from '../common/auth/auth.decorators';

/**
 * GET /application/{id}: the application's name and account, for the console's header and
 * breadcrumbs, and a portal link's expiry. Unlike GET /applications a portal token may read it —
 * for its own application only, as every route under /application/{id}.
 */
@ApplicationController('', { tag: 'applications' })
export class ApplicationOverviewController {
  constructor(
    private readonly applications: ApplicationRepository,
    private readonly accounts: AccountRepository,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'Read an application',
    description: 'Its name and account; with a portal token, also when the portal link expires.',
  })
  @ApiOkResponse({ type: ApplicationOverviewResponse })
  async read(@OwnedApplication() scope: ApplicationScope, @Req() request: AuthenticatedRequest): Promise<ApplicationOverviewResponse> {
    // The access guard has just found both; a miss here is a row deleted in between.
    const application = await this.applications.findById(scope.applicationId);
    const account = await this.accounts.findById(scope.accountId);
    if (!application || !account) throw new Error(`application ${scope.applicationId} vanished while it was being read`);
    const principal = request.principal;
    return ok({
      id: application.id,
      name: application.name,
      account: { id: account.id, name: account.name },
      portal_link_expires_at: principal?.scope === 'portal' ? principal.expiresAt.toISOString() : null,
    });
  }
}
