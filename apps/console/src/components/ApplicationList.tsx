import { useInfiniteQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, call } from '../api/client';
import { ErrorMessage } from './ErrorMessage';

/** The query key of GET /applications: what to invalidate once an application is created. */
export const APPLICATIONS_QUERY_KEY = ['applications'] as const;

/**
 * The applications the signed-in key may act on (GET /applications: an account key's own, every
 * one for an admin key), by id, 50 at a time, each a link whose name starts "Application {id}".
 * `accountNames` (admins) shows each application's account by name.
 */
export function ApplicationList({ accountNames, empty }: { accountNames?: ReadonlyMap<string, string>; empty: string }) {
  const apps = useInfiniteQuery({
    queryKey: APPLICATIONS_QUERY_KEY,
    queryFn: ({ pageParam }) => call(api.GET('/applications', { params: { query: { limit: 50, cursor: pageParam } } })),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const rows = apps.data?.pages.flatMap((p) => p.data) ?? [];
  return (
    <>
      <ErrorMessage error={apps.error} />
      {apps.isPending ? <p className="muted">Loading…</p> : null}
      {rows.length === 0 && apps.isSuccess ? <p className="muted">{empty}</p> : null}
      {rows.length > 0 && (
        <ul className="app-list">
          {rows.map((app) => (
            <li key={app.id}>
              <Link to={`/applications/${app.id}/webhook`}>
                <span className="app-id">Application {app.id}</span> <span>{app.name}</span>
              </Link>
              {accountNames && <span className="muted">{accountNames.get(app.account_id) ?? app.account_id}</span>}
            </li>
          ))}
        </ul>
      )}
      {apps.hasNextPage && (
        <button type="button" className="button subtle" disabled={apps.isFetchingNextPage} onClick={() => void apps.fetchNextPage()}>
          More applications
        </button>
      )}
    </>
  );
}
