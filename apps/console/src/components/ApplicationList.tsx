import { useInfiniteQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, call } from '../api/client';
import { plural, useWebhookStatus } from '../api/queries';
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
              <span className="app-meta">
                <EndpointBadge applicationId={app.id} />
                {accountNames && <span className="muted">{accountNames.get(app.account_id) ?? app.account_id}</span>}
              </span>
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

/** Trouble on the list itself (issue 26 #3): a disabled or failing endpoint, or none yet. Nothing when all is well. */
function EndpointBadge({ applicationId }: { applicationId: number }) {
  const status = useWebhookStatus(applicationId);
  const s = status.data;
  if (s === null) return <span className="badge badge-neutral">no webhook</span>;
  if (!s) return null;
  if (s.state === 'disabled') return <span className="badge badge-danger">endpoint disabled</span>;
  if (s.consecutive_failures > 0)
    return <span className="badge badge-warning">failing: {plural(s.consecutive_failures, 'failure')} in a row</span>;
  return null;
}
