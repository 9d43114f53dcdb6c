import { AppError, APPLICATION_ID_MAX, quoteInput } from '@herald/contracts';
import { ApplicationRepository, ApplicationScope } from '@herald/database';
import { CanActivate, createParamDecorator, ExecutionContext, Injectable } from '@nestjs/common';
import { AuthenticatedRequest } from '../auth/auth.decorators';
import { ApplicationDirectory } from './application-directory';

type ScopedRequest = AuthenticatedRequest & { applicationScope?: ApplicationScope; params: Record<string, string> };

/**
 * Resolves `:application_id` once per request: malformed → 400-03, unknown → 404-01 (checked
 * before ownership), another account's → 403-03. Admin keys may act on every application.
 * Handlers receive the resulting ApplicationScope with @OwnedApplication().
 */
@Injectable()
export class ApplicationAccessGuard implements CanActivate {
  constructor(
    private readonly directory: ApplicationDirectory,
    private readonly applications: ApplicationRepository,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<ScopedRequest>();
    const principal = request.principal;
    if (!principal) throw new Error('ApplicationAccessGuard must run after ApiKeyGuard');

    const applicationId = parseApplicationId(request.params.application_id);
    const application = await this.directory.find(applicationId);
    if (!application) throw new AppError('APPLICATION_NOT_FOUND', `Application ${applicationId} does not exist.`);
    if (principal.scope !== 'admin' && application.accountId !== principal.accountId) {
      throw new AppError('APPLICATION_FORBIDDEN', `The API key has no access to application ${applicationId}.`);
    }
    request.applicationScope = this.applications.scopeOf(application);
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
