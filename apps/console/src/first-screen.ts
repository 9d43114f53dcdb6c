import type { QueryClient } from '@tanstack/react-query';
import { matchPath, matchRoutes, type RouteObject } from 'react-router';
import { applicationOverviewQuery, deliveryPagesQuery, logFiltersFrom } from './api/queries';

/**
 * Starts what the address's first screen waits for, before React renders anything (issue 26: the
 * first screen of a 100,000-delivery log within 1 s). Mounted queries ask only after React's first
 * commit and paint, and an application's
 * screen mounts only once the application's overview has answered (ApplicationLayout shows no
 * tabs before it), so the log's rows were asked for two round trips and two renders late. Here:
 *
 * - the screen's chunk (lazy-pages.ts), named by the matched route's `handle`;
 * - an application's overview, and on the log its first page, into the very cache entries the
 *   layout and the page read (`applicationOverviewQuery`, `deliveryPagesQuery`): they find them in
 *   flight or answered and ask nothing twice.
 *
 * The endpoint's state and the catalogue are left to the screens, which ask for them as before.
 */
export function startFirstScreen(routes: RouteObject[], queryClient: QueryClient, hash: string, signedIn: boolean): void {
  const [pathname = '', search = ''] = hash.replace(/^#/, '').split('?', 2);
  const path = pathname || '/';
  for (const match of matchRoutes(routes, path) ?? []) {
    const handle = match.route.handle as { preload?: () => Promise<unknown> } | undefined;
    void handle?.preload?.();
  }
  if (!signedIn) return;
  const application = matchPath({ path: '/applications/:applicationId', end: false }, path);
  const id = Number(application?.params.applicationId);
  if (!Number.isInteger(id) || id < 1) return;
  void queryClient.prefetchQuery(applicationOverviewQuery(id));
  if (matchPath('/applications/:applicationId/deliveries', path)) {
    void queryClient.prefetchInfiniteQuery(deliveryPagesQuery(id, logFiltersFrom(new URLSearchParams(search))));
  }
}
