import { CreatePortalLinkRequest, ok, PortalLinkResponse, RevokedPortalLinksResponse } from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { Body, Delete, HttpCode, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { RefusesPortalTokens } from '../common/auth/auth.decorators';
import { ApiErrors, BODY_ERRORS } from '../common/swagger/api-errors.decorator';
import { Caller, CallerOf } from '../common/audit/caller';
import { PortalLinkService } from './portal-link.service';

/**
 * Customer portal links (PRODUCT.md §12): the platform hands its customer a link to the console
 * for one application. Made and revoked with the application's account key or an admin key; a
 * portal token may not make or revoke links (403-04), or one leaked link could outlive its expiry.
 */
@ApplicationController('portal_links', { tag: 'portal', errors: ['SCOPE_REQUIRED'] })
@RefusesPortalTokens()
export class PortalLinkController {
  constructor(private readonly portalLinks: PortalLinkService) {}

  @Post()
  @ApiOperation({
    summary: 'Create a customer portal link',
    description:
      'A link that opens the console for this application only, with a token (`hp_…`, shown only here) in its fragment. ' +
      "The token works as an API key on this application's routes and the event-type and error-code catalogues, nothing " +
      'else, until `expires_at` (expires_in_seconds from now: 60 to 86400, 3600 by default) or until revoked. Send `{}` ' +
      'for the defaults.',
  })
  @ApiCreatedResponse({ type: PortalLinkResponse })
  @ApiErrors(...BODY_ERRORS)
  async create(
    @OwnedApplication() scope: ApplicationScope,
    @Body() body: CreatePortalLinkRequest,
    @CallerOf() caller: Caller,
  ): Promise<PortalLinkResponse> {
    return ok(await this.portalLinks.create(scope, body, caller));
  }

  @Delete()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Revoke every portal link of the application',
    description:
      'Every link that still works stops working on the next request, in every api process. Answers with how many were ' +
      'revoked (0 when none worked: revoking is safe to repeat).',
  })
  @ApiOkResponse({ type: RevokedPortalLinksResponse })
  async revokeAll(@OwnedApplication() scope: ApplicationScope, @CallerOf() caller: Caller): Promise<RevokedPortalLinksResponse> {
    return ok(await this.portalLinks.revokeAll(scope, caller));
  }
}
