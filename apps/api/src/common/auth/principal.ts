import type { ApiKeyScope } from '@herald/database';

/** An API key: an account's (its applications) or the operator's (`admin`, every application). */
export interface ApiKeyPrincipal {
  keyId: string;
  scope: ApiKeyScope;
  /** null for admin keys, which act on every account. */
  accountId: string | null;
  /** The key's display prefix, for audit records (never more of the key). */
  prefix: string;
}

/**
 * A customer portal token (PRODUCT.md §12): one application's tenant routes, until it expires or
 * is revoked. `accountId` is its application's account, so the access guard's ownership check
 * holds for it as for that account's key; ApiKeyGuard narrows it to the one application.
 */
export interface PortalPrincipal {
  /** The portal link's id: the rate limiter's bucket and what a revocation evicts. */
  keyId: string;
  scope: 'portal';
  accountId: string;
  applicationId: number;
  expiresAt: Date;
}

/** Who is calling: the API key or portal token that authenticated the request. */
export type Principal = ApiKeyPrincipal | PortalPrincipal;
