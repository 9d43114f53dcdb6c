import { useQueryClient } from '@tanstack/react-query';
import { Suspense, useEffect, useState } from 'react';
import { createHashRouter, Navigate, NavLink, Outlet, RouterProvider, useNavigate, type RouteObject } from 'react-router';
import { HeraldApiError } from '@herald/client';
import { portalLinkFromHash, readSession, type Session } from './api/session';
import { ErrorMessage } from './components/ErrorMessage';
import { Loading } from './components/Loading';
import { pages, type LazyPage } from './lazy-pages';
import { ApplicationLayout } from './pages/ApplicationLayout';
import { SessionProvider, useRole, useSession } from './session-context';

/**
 * A portal link carries its token in the fragment (never sent to a server). Take it once, keep it
 * in sessionStorage, and take it out of the address bar (and history) before anything renders.
 */
export function initialSession(): Session | null {
  const link = portalLinkFromHash(window.location.hash);
  if (link) {
    const session: Session = { kind: 'portal', credential: link.token, applicationId: link.applicationId };
    sessionStorage.setItem('herald.credential', link.token);
    sessionStorage.setItem('herald.portalApplication', String(link.applicationId));
    window.history.replaceState(
      null,
      '',
      `${window.location.pathname}${window.location.search}#/applications/${link.applicationId}/webhook`,
    );
    return session;
  }
  return readSession();
}

function SkipLink() {
  // The hash router would read #main as a route: move the focus by hand instead.
  return (
    <a
      className="skip-link"
      href="#main"
      onClick={(event) => {
        event.preventDefault();
        document.getElementById('main')?.focus();
      }}
    >
      Skip to content
    </a>
  );
}

function Shell() {
  const { session } = useSession();
  if (!session)
    return (
      <Suspense fallback={<Loading />}>
        <pages.signIn.Page />
      </Suspense>
    );
  return session.kind === 'portal' ? <PortalShell /> : <KeyShell />;
}

function KeyShell() {
  const { signOut } = useSession();
  const navigate = useNavigate();
  const role = useRole();
  return (
    <div className="shell">
      <SkipLink />
      <header className="topbar">
        <span className="brand">Herald</span>
        <nav aria-label="Main">
          <NavLink to="/" end>
            Applications
          </NavLink>
          {role.data === 'admin' && <NavLink to="/audit">Audit log</NavLink>}
          <NavLink to="/error-codes">Error codes</NavLink>
        </nav>
        <span className="topbar-end">
          <span className="role muted">{role.data === 'admin' ? 'Operator' : role.data === 'account' ? 'Account' : ''}</span>
          <button
            type="button"
            className="button subtle"
            onClick={() => {
              signOut();
              navigate('/');
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      <main id="main" tabIndex={-1}>
        {/* Only the home page depends on the role: an application's page does not wait for the probe. */}
        {role.isError ? (
          <ErrorMessage error={role.error} />
        ) : (
          <Suspense fallback={<Loading />}>
            <Outlet />
          </Suspense>
        )}
      </main>
    </div>
  );
}

/**
 * The customer's page (issue 26 #10): their application only, no operator navigation, no sign
 * out into an API-key form they cannot use; once the link has expired or been revoked (any
 * answer 403-02), a page that says so and what to ask for instead of the forms.
 */
function PortalShell() {
  const queryClient = useQueryClient();
  const [ended, setEnded] = useState(false);
  useEffect(() => {
    const isEnd = (error: unknown) => error instanceof HeraldApiError && error.code === '403-02';
    // The first screen's answers may have come before this subscription (first-screen.ts).
    if (
      queryClient
        .getQueryCache()
        .getAll()
        .some((query) => isEnd(query.state.error))
    )
      setEnded(true);
    const stopQueries = queryClient.getQueryCache().subscribe((event) => {
      if (event.type === 'updated' && isEnd(event.query.state.error)) setEnded(true);
    });
    const stopMutations = queryClient.getMutationCache().subscribe((event) => {
      if (event.type === 'updated' && isEnd(event.mutation?.state.error)) setEnded(true);
    });
    return () => {
      stopQueries();
      stopMutations();
    };
  }, [queryClient]);
  if (ended) return <PortalLinkEnded />;
  return (
    <div className="shell">
      <SkipLink />
      <header className="topbar portal-bar">
        <span className="brand">Webhook settings</span>
      </header>
      <main id="main" tabIndex={-1}>
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </main>
    </div>
  );
}

function PortalLinkEnded() {
  return (
    <main className="sign-in" id="main">
      <section className="card narrow" aria-labelledby="ended-heading">
        <h1 id="ended-heading">This link no longer works</h1>
        <p>
          It has expired or was withdrawn: links to this page work for a limited time, and the team that sent it can withdraw one at any
          moment.
        </p>
        <p>Ask the team that sent it to you for a new link. Nothing was changed, and your webhook keeps receiving events.</p>
      </section>
    </main>
  );
}

function Home() {
  const { session } = useSession();
  const role = useRole();
  if (session?.kind === 'portal') return <Navigate to={`/applications/${session.applicationId}/webhook`} replace />;
  if (role.isPending) return <Loading />;
  return role.data === 'admin' ? <pages.adminHome.Page /> : <pages.accountHome.Page />;
}

/** A screen's chunk that no longer loads: most likely the api was upgraded under an open tab, and its old chunks are gone. */
function ScreenFailed() {
  return (
    <main className="sign-in" id="main">
      <section className="card narrow" role="alert">
        <h1>This screen could not be loaded</h1>
        <p>Herald may have been updated since this tab was opened. Reload the page to get the current console.</p>
        <button type="button" className="button primary" onClick={() => window.location.reload()}>
          Reload
        </button>
      </section>
    </main>
  );
}

/** Each route's screen; `handle` says which chunk to start downloading when the page opens on it (first-screen.ts). */
const screen = (page: LazyPage): Pick<RouteObject, 'element' | 'handle'> => ({ element: <page.Page />, handle: page });

export const routes: RouteObject[] = [
  {
    path: '/',
    element: <Shell />,
    errorElement: <ScreenFailed />,
    children: [
      { index: true, element: <Home />, handle: { preload: () => Promise.all([pages.adminHome.preload(), pages.accountHome.preload()]) } },
      { path: 'error-codes', ...screen(pages.errorCodes) },
      { path: 'audit', ...screen(pages.adminAudit) },
      {
        path: 'applications/:applicationId',
        element: <ApplicationLayout />,
        children: [
          { index: true, element: <Navigate to="webhook" replace /> },
          { path: 'webhook', ...screen(pages.webhook) },
          { path: 'subscriptions', ...screen(pages.subscriptions) },
          { path: 'deliveries', ...screen(pages.deliveries) },
          { path: 'deliveries/:deliveryId', ...screen(pages.delivery) },
          { path: 'events', ...screen(pages.events) },
          { path: 'events/:eventId', ...screen(pages.event) },
          { path: 'statistics', ...screen(pages.statistics) },
          { path: 'endpoint', ...screen(pages.endpoint) },
          { path: 'audit', ...screen(pages.audit) },
        ],
      },
      { path: '*', element: <Navigate to="/" replace /> },
    ],
  },
];

const router = createHashRouter(routes);

export function App({ session }: { session: Session | null }) {
  return (
    <SessionProvider initial={session}>
      <RouterProvider router={router} />
    </SessionProvider>
  );
}
