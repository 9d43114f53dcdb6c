import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ADMIN_ONLY, AuthenticatedRequest, PUBLIC_ROUTE, REFUSES_PORTAL_TOKENS } from './auth.decorators';
import { RequestAuthenticator } from './request-authenticator';

/** Authenticates every Nest route but the @Public ones, with the marks the route carries (RequestAuthenticator). */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: RequestAuthenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    await this.authenticator.authenticate(context.switchToHttp().getRequest<AuthenticatedRequest>(), {
      adminOnly: this.reflector.getAllAndOverride<boolean>(ADMIN_ONLY, targets) === true,
      refusesPortalTokens: this.reflector.getAllAndOverride<boolean>(REFUSES_PORTAL_TOKENS, targets) === true,
    });
    return true;
  }
}
