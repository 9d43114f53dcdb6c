import { AppError } from '@herald/contracts';
import { parseApplicationId } from '../access/application-access.guard';
import { AuthenticatedRequest } from './auth.decorators';
import { PortalPrincipal } from './principal';

/**
 * Routes outside /application/{application_id} a portal token may read: the catalogues the
 * console shows a customer (event types to subscribe to, the error directory). Listed here, so
 * that everything a portal token reaches beyond its application is in one place and a new
 * route is closed to it until someone adds it on purpose. HEAD is answered as GET.
 * `GET /applications` stays out on purpose: it would tell the token's holder which other
 * applications its account has.
 */
const PORTAL_READABLE_ROUTES: ReadonlySet<string> = new Set([
  'GET /event_types',
  'GET /event_types/:name',
  'GET /error_codes',
  'GET /error_codes/:code',
]);

/**
 * Where a portal token may go (PRODUCT.md §12: "nothing else of the operator's is reachable"):
 * its own application's tenant routes, except those marked @RefusesPortalTokens (403-04), and
 * the catalogue reads above. Another application's routes are 403-03 whether that application
 * exists or not: the token's holder is a customer of the platform, not the platform, and has no
 * business learning which ids exist. A malformed id is still 400-03, as for every key. Admin
 * routes never get here: ApiKeyGuard refuses them (403-04) first.
 */
export function assertPortalMayCall(principal: PortalPrincipal, request: AuthenticatedRequest, routeRefusesPortal: boolean): void {
  const params = request.params as Record<string, string | undefined> | undefined;
  const rawApplicationId = params?.application_id;
  if (rawApplicationId === undefined) {
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (PORTAL_READABLE_ROUTES.has(`${method} ${request.routeOptions.url}`)) return;
    throw new AppError('SCOPE_REQUIRED', `A portal token works only on application ${principal.applicationId}'s routes.`);
  }
  const applicationId = parseApplicationId(rawApplicationId);
  if (applicationId !== principal.applicationId) {
    throw new AppError(
      'APPLICATION_FORBIDDEN',
      `This portal token works only on application ${principal.applicationId}, not on application ${applicationId}.`,
    );
  }
  if (routeRefusesPortal) {
    throw new AppError('SCOPE_REQUIRED', "A portal token cannot do this; use the application's account key or an admin key.");
  }
}
