import { AppError, APPLICATION_ID_MAX, quoteInput } from '@herald/contracts';
import { ApplicationRepository, ApplicationScope } from '@herald/database';
import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import { AuthenticatedRequest } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { ApplicationDirectory } from './application-directory';

type ScopedRequest = AuthenticatedRequest & { applicationScope?: ApplicationScope; params: Record<string, string> };

/**
 * Resolves `:application_id` for a caller: malformed → 400-03, unknown → 404-01 (checked before
 * ownership), another account's → 403-03. Admin keys may act on every application. The one
 * implementation behind ApplicationAccessGuard and the direct routes (direct-routes.ts).
 */
@Injectable()
export class ApplicationAccess {
  constructor(
    private readonly directory: ApplicationDirectory,
    private readonly applications: ApplicationRepository,
  ) {}

  async scopeFor(principal: Principal, rawApplicationId: string | undefined): Promise<ApplicationScope> {
    const applicationId = parseApplicationId(rawApplicationId);
    const application = await this.directory.find(applicationId);
    if (!application) throw new AppError('APPLICATION_NOT_FOUND', `Application ${applicationId} does not exist.`);
    if (principal.scope !== 'admin' && application.accountId !== principal.accountId) {
      throw new AppError('APPLICATION_FORBIDDEN', `The API key has no access to application ${applicationId}.`);
    }
    return this.applications.scopeOf(application);
  }
}

/** ApplicationAccess for a controller's routes; handlers receive the scope with @OwnedApplication(). */
@Injectable()
export class ApplicationAccessGuard implements CanActivate {
  constructor(private readonly access: ApplicationAccess) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<ScopedRequest>();
    const principal = request.principal;
    if (!principal) throw new Error('ApplicationAccessGuard must run after ApiKeyGuard');
    request.applicationScope = await this.access.scopeFor(principal, request.params.application_id);
    return true;
  }
}

export function parseApplicationId(raw: string | undefined): number {
  const value = Number(raw);
  if (!raw || !/^[1-9][0-9]{0,9}$/.test(raw) || value > APPLICATION_ID_MAX) {
    throw new AppError('INVALID_PARAMETER', `application_id must be an integer from 1 to ${APPLICATION_ID_MAX}.`, {
      details: [{ field: 'application_id', message: `expected an integer from 1 to ${APPLICATION_ID_MAX}, got ${quoteInput(raw ?? '')}` }],
    });
  }
  return value;
}

export const OwnedApplication = createParamDecorator((_: unknown, context: ExecutionContext): ApplicationScope => {
  const scope = context.switchToHttp().getRequest<ScopedRequest>().applicationScope;
  if (!scope) throw new Error('OwnedApplication used on a route without ApplicationAccessGuard');
  return scope;
});
