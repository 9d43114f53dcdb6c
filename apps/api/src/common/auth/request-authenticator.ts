import { AppError } from '@herald/contracts';
import { Injectable } from '@nestjs/common';
import { ApiKeyRateLimiter } from '../rate-limit/api-key-rate-limiter';
import { ApiKeyCache } from './api-key-cache';
import { AuthenticatedRequest } from './auth.decorators';
import { assertPortalMayCall } from './portal-access';
import { looksLikePortalToken } from './portal-token';
import { Principal } from './principal';

/** What a route (not public) asks of its caller beyond a valid key: its @AdminOnly and @RefusesPortalTokens marks. */
export interface RouteAccessMarks {
  adminOnly: boolean;
  refusesPortalTokens: boolean;
}

/**
 * Authenticates a request: the one implementation behind ApiKeyGuard (every Nest route) and the
 * direct routes (direct-routes.ts). The key arrives as `Authorization: <key>` or
 * `Authorization: Bearer <key>`; only its SHA-256 is looked up (through ApiKeyCache, which a
 * revocation empties of that key at once). The seed answers 403 for everything a caller may
 * not do; 401 is never used. A valid key then spends one token of its rate limit. A customer
 * portal token (`hp_…`) is a key too, confined to its one application (portal-access.ts).
 */
@Injectable()
export class RequestAuthenticator {
  constructor(
    private readonly apiKeys: ApiKeyCache,
    private readonly rateLimiter: ApiKeyRateLimiter,
  ) {}

  /** The caller's principal, also left on `request.principal`; throws the directory error that refuses it. */
  async authenticate(request: AuthenticatedRequest, marks: RouteAccessMarks): Promise<Principal> {
    const key = presentedKey(request.headers.authorization);
    if (!key) throw new AppError('API_KEY_MISSING', 'Send your API key in the Authorization header.');

    const principal = await this.apiKeys.principalFor(key);
    if (!principal) {
      const problem = looksLikePortalToken(key)
        ? 'The portal token is unknown, has expired or has been revoked.'
        : 'The API key is unknown or has been revoked.';
      throw new AppError('API_KEY_INVALID', problem);
    }
    request.principal = principal;
    // Counted once the key is known to be valid, so nobody can spend another caller's budget.
    this.rateLimiter.spend(principal.keyId);

    if (marks.adminOnly && principal.scope !== 'admin') {
      throw new AppError('SCOPE_REQUIRED', 'This route needs an admin API key.');
    }
    if (principal.scope === 'portal') assertPortalMayCall(principal, request, marks.refusesPortalTokens);
    return principal;
  }
}

function presentedKey(header: string | undefined): string | null {
  const value = header?.trim();
  if (!value) return null;
  const bearer = /^bearer\s+(.+)$/i.exec(value);
  const key = (bearer ? bearer[1] : value).trim();
  return key === '' ? null : key;
}
