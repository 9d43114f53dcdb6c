import type { AuditActor } from '@herald/core';
import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { AuthenticatedRequest } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';

/** Who made a request, as its audit record names them (PRODUCT.md §16): the key or portal link, and the request id. */
export interface Caller {
  actor: AuditActor;
  requestId: string;
}

export function actorOf(principal: Principal): AuditActor {
  if (principal.scope === 'portal') return { type: 'portal_link', id: principal.keyId, prefix: null };
  return { type: principal.scope === 'admin' ? 'admin_key' : 'api_key', id: principal.keyId, prefix: principal.prefix };
}

/**
 * The caller of an authenticated route, for the services that record what it changes. Routes
 * that change configuration or access take it; apps/api/test/audit.e2e-spec.ts fails for a
 * mutating route that writes no record.
 */
export const CallerOf = createParamDecorator((_: unknown, context: ExecutionContext): Caller => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!request.principal) throw new Error('CallerOf used on a route without ApiKeyGuard');
  return { actor: actorOf(request.principal), requestId: String(request.id) };
});
