import { SetMetadata } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Principal } from './principal';

export const PUBLIC_ROUTE = 'herald:public-route';
export const ADMIN_ONLY = 'herald:admin-only';

/** Answers without an API key (health checks). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

/** Only admin-scope keys may call it; account keys get 403-04. */
export const AdminOnly = () => SetMetadata(ADMIN_ONLY, true);

export type AuthenticatedRequest = FastifyRequest & { principal?: Principal };

export const REFUSES_PORTAL_TOKENS = 'herald:refuses-portal-tokens';

/**
 * A route under /application/{application_id} that a portal token may not call although it is
 * its application's (portal links themselves: a link must not mint or revoke links). 403-04.
 * Routes outside an application are closed to portal tokens anyway (portal-access.ts); marking
 * one says so where the route is written (GET /applications).
 */
export const RefusesPortalTokens = () => SetMetadata(REFUSES_PORTAL_TOKENS, true);
