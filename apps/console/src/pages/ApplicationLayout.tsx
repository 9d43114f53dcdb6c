import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, NavLink, Outlet, useLocation, useParams } from 'react-router';
import { HeraldApiError } from '@herald/client';
import { api, call } from '../api/client';
import { countsKey, plural, useApplicationOverview, useDeliveryCounts, useWebhookStatus, webhookStatusKey } from '../api/queries';
import { ErrorMessage } from '../components/ErrorMessage';
import { Time } from '../components/Time';
import { absoluteTime, relativeTime } from '../lib/time';
import { useSession } from '../session-context';

export function useApplicationId(): number {
  const { applicationId } = useParams();
  return Number(applicationId);
}

const TABS: [string, string][] = [
  ['webhook', 'Webhook'],
  ['subscriptions', 'Subscriptions'],
  ['deliveries', 'Deliveries'],
  ['events', 'Events'],
  ['statistics', 'Statistics'],
  ['endpoint', 'Secret and health'],
  ['audit', 'Audit log'],
];

export function ApplicationLayout() {
  const id = useApplicationId();
  const { session } = useSession();
  const overview = useApplicationOverview(id);
  if (!Number.isInteger(id) || id < 1) return <NoApplication title="Not an application" text={`“${id}” is not an application id.`} />;
  // One clear message instead of every tab and form around an error (issue 26 #9).
  if (overview.error instanceof HeraldApiError && (overview.error.code === '403-03' || overview.error.code === '404-01')) {
    return overview.error.code === '404-01' ? (
      <NoApplication
        title="No such application"
        text={`There is no application ${id}. It may have been deleted, or the address is mistyped.`}
      />
    ) : (
      <NoApplication
        title="Not your application"
        text={`This key has no access to application ${id}. It belongs to another account; sign in with one of that account's keys.`}
      />
    );
  }
  if (overview.error) return <ErrorMessage error={overview.error} />;
  // The tabs wait for the application: an unknown or forbidden one must not flash its forms (and their errors).
  if (overview.isPending)
    return (
      <p className="loading" role="status">
        Loading the application…
      </p>
    );
  const app = overview.data;
  const portal = session?.kind === 'portal';
  return (
    <div className="stack">
      <header className="app-header">
        {!portal && (
          <nav aria-label="Breadcrumb" className="breadcrumbs">
            <ol>
              <li>
                <Link to="/">Applications</Link>
              </li>
              <li>{app.account.name}</li>
              <li aria-current="page">{app.name}</li>
            </ol>
          </nav>
        )}
        <h1>
          {app.name} <span className="muted app-number">Application {id}</span>
        </h1>
        {app.portal_link_expires_at && (
          <p className="muted">
            This page's link works until <time dateTime={app.portal_link_expires_at}>{absoluteTime(app.portal_link_expires_at)}</time>.
          </p>
        )}
      </header>
      <EndpointTrouble applicationId={id} />
      <nav className="tabs" aria-label="Application">
        {TABS.map(([path, label]) => (
          <NavLink key={path} to={`/applications/${id}/${path}`}>
            {label}
          </NavLink>
        ))}
      </nav>
      <Outlet />
    </div>
  );
}

function NoApplication({ title, text }: { title: string; text: string }) {
  const { session } = useSession();
  return (
    <section className="card narrow-page" aria-labelledby="no-app-heading">
      <h1 id="no-app-heading">{title}</h1>
      <p>{text}</p>
      {session?.kind !== 'portal' && <Link to="/">Back to your applications</Link>}
    </section>
  );
}

/**
 * Endpoint trouble where the user is (issue 26 #3): on every tab of the application, a disabled
 * endpoint says how many deliveries wait and offers Enable; a failing one says since when and how
 * many attempts in a row failed; no webhook says so.
 */
export function EndpointTrouble({ applicationId }: { applicationId: number }) {
  const queryClient = useQueryClient();
  const location = useLocation();
  const status = useWebhookStatus(applicationId, { poll: true });
  const s = status.data;
  // Counted only when there is something to say (a scan of the application's deliveries).
  const counts = useDeliveryCounts(applicationId, {}, { poll: true, enabled: s?.state === 'disabled' });
  const enable = useMutation({
    mutationFn: () =>
      call(api.POST('/application/{application_id}/webhook/enable', { params: { path: { application_id: applicationId } } })),
    onSuccess: (res) => {
      queryClient.setQueryData(webhookStatusKey(applicationId), res.data);
      void queryClient.invalidateQueries({ queryKey: countsKey(applicationId) });
      void queryClient.invalidateQueries({ queryKey: ['deliveries', applicationId] });
    },
  });
  if (status.isPending || status.isError) return null;
  if (s === null) {
    if (location.pathname.endsWith('/webhook')) return null;
    return (
      <p className="notice">
        This application has no webhook yet: nothing is sent until one is configured.{' '}
        <Link to={`/applications/${applicationId}/webhook`}>Configure the webhook</Link>
      </p>
    );
  }
  if (!s) return null;
  if (s.state === 'disabled') {
    const paused = counts.data?.paused;
    return (
      <section className="banner banner-danger" aria-label="Endpoint disabled">
        <div>
          <strong>Endpoint disabled</strong>
          {s.disabled_at && (
            <>
              {' '}
              <Time iso={s.disabled_at} />
            </>
          )}
          {s.disabled_reason && (
            <span> ({s.disabled_reason === 'manual' ? 'by hand' : 'by Herald, after failing for hours with no success'})</span>
          )}
          .{' '}
          {paused === undefined
            ? 'Deliveries are paused'
            : paused === 0
              ? 'No delivery is waiting'
              : `${plural(paused, 'delivery', 'deliveries')} paused`}{' '}
          until it is enabled again.
        </div>
        <button type="button" className="button primary" disabled={enable.isPending} onClick={() => enable.mutate()}>
          Enable endpoint
        </button>
        <ErrorMessage error={enable.error} />
      </section>
    );
  }
  if (s.consecutive_failures > 0 && s.failing_since) {
    return (
      <section className="banner banner-warning" aria-label="Endpoint failing">
        <div>
          <strong>Endpoint failing</strong> since <Time iso={s.failing_since} />: {plural(s.consecutive_failures, 'failed attempt')} in a
          row,{' '}
          {s.last_success_at ? (
            <>
              last success <Time iso={s.last_success_at} />.
            </>
          ) : (
            'no success yet.'
          )}
          {s.will_disable_at && (
            // PRODUCT.md §16: the warning before Herald disables it, with the moment to beat.
            <p className="banner-deadline">
              Herald will disable it on <time dateTime={s.will_disable_at}>{absoluteTime(s.will_disable_at)}</time> (
              {relativeTime(s.will_disable_at)}) unless a delivery succeeds before then.
            </p>
          )}
        </div>
        <Link className="button subtle" to={`/applications/${applicationId}/deliveries?status=failed`}>
          See failed deliveries
        </Link>
      </section>
    );
  }
  return null;
}
