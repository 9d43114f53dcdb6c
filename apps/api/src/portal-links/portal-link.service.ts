import { auditChanges, Clock, CLOCK, ID_GENERATOR, IdGenerator } from '@herald/core';
import { CreatePortalLinkRequest, PORTAL_LINK_LIFETIME_SECONDS, PortalLinkDto, RevokedPortalLinksDto } from '@herald/contracts';
import { ApplicationScope, PortalLinkRepository } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { AuditTrail } from '../common/audit/audit-trail';
import { Caller } from '../common/audit/caller';
import { ApiKeyCache } from '../common/auth/api-key-cache';
import { issuePortalToken } from '../common/auth/portal-token';

/**
 * Where the console opens a portal link. Relative, because the api does not know the address
 * its callers reach it at: it trusts no X-Forwarded-* header (Fastify's trustProxy is off) and
 * the Host header is the client's to choose, so an absolute URL built from either could point
 * anywhere. The platform joins this to the Herald address it already calls (as the OpenAPI
 * document's relative server does). The token travels in the fragment, which browsers never
 * send to a server, so it appears in no access log on the way.
 */
export function portalUrl(applicationId: number, token: string): string {
  return `/console/#/portal?application_id=${applicationId}&token=${token}`;
}

@Injectable()
export class PortalLinkService {
  constructor(
    private readonly links: PortalLinkRepository,
    private readonly keyCache: ApiKeyCache,
    private readonly audit: AuditTrail,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** The token is returned here and never again: only its hash is stored. Recorded (`portal_link.created`) by the link's id. */
  async create(scope: ApplicationScope, request: CreatePortalLinkRequest, caller: Caller): Promise<PortalLinkDto> {
    const now = this.clock.now();
    const lifetimeSeconds = request.expires_in_seconds ?? PORTAL_LINK_LIFETIME_SECONDS.default;
    const issued = issuePortalToken();
    const created = {
      id: this.ids.next('ptl'),
      tokenHash: issued.hash,
      expiresAt: new Date(now.getTime() + lifetimeSeconds * 1000),
      createdAt: now,
    };
    const record = this.audit.entry(
      caller,
      'portal_link.created',
      scope,
      auditChanges(null, { id: created.id, expires_at: created.expiresAt.toISOString() }),
    );
    const link = await this.links.create(scope, created, record);
    return { url: portalUrl(scope.applicationId, issued.token), token: issued.token, expires_at: link.expiresAt.toISOString() };
  }

  /**
   * Revokes every working link of the application; recorded (`portal_links.revoked`) with the ids
   * of the links that worked before and none after. This process forgets them here; every other
   * api process hears of it through the NOTIFY the revoking statement sends.
   */
  async revokeAll(scope: ApplicationScope, caller: Caller): Promise<RevokedPortalLinksDto> {
    const revoked = await this.links.revokeAll(scope, this.clock.now(), (ids) =>
      this.audit.entry(caller, 'portal_links.revoked', scope, ids.length > 0 ? { working_links: [ids, []] } : {}),
    );
    this.keyCache.forgetAll(revoked);
    return { revoked: revoked.length };
  }
}
