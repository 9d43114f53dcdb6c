import { createHashRouter, Navigate, NavLink, Outlet, RouterProvider, useNavigate } from 'react-router';
import { portalLinkFromHash, readSession, type Session } from './api/session';
import { ErrorMessage } from './components/ErrorMessage';
import { AdminHome } from './pages/AdminHome';
import { AccountHome } from './pages/AccountHome';
import { ApplicationLayout } from './pages/ApplicationLayout';
import { DeliveriesPage } from './pages/DeliveriesPage';
import { DeliveryPage } from './pages/DeliveryPage';
import { EndpointPage } from './pages/EndpointPage';
import { ErrorCodesPage } from './pages/ErrorCodesPage';
import { EventsPage } from './pages/EventsPage';
import { SignIn } from './pages/SignIn';
import { SubscriptionsPage } from './pages/SubscriptionsPage';
import { WebhookPage } from './pages/WebhookPage';
import { SessionProvider, useRole, useSession } from './session-context';

/**
 * A portal link carries its token in the fragment (never sent to a server). Take it once, keep it
 * in sessionStorage, and take it out of the address bar (and history) before anything renders.
 */
function initialSession(): Session | null {
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

function Shell() {
  const { session, signOut } = useSession();
  const navigate = useNavigate();
  const role = useRole();
  if (!session) return <SignIn />;
  return (
    <div className="shell">
      {/* The hash router would read #main as a route: move the focus by hand instead. */}
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
      <header className="topbar">
        <span className="brand">Herald</span>
        <nav aria-label="Main">
          {session.kind === 'portal' ? (
            // Without `end`: the link stays marked on every tab of the application.
            <NavLink to={`/applications/${session.applicationId}`}>Application {session.applicationId}</NavLink>
          ) : (
            <NavLink to="/" end>
              Applications
            </NavLink>
          )}
          <NavLink to="/error-codes">Error codes</NavLink>
        </nav>
        <span className="role muted">
          {role.data === 'admin' ? 'Admin' : role.data === 'account' ? 'Account' : role.data === 'portal' ? 'Portal' : ''}
        </span>
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
      </header>
      <main id="main" tabIndex={-1}>
        {role.isError ? <ErrorMessage error={role.error} /> : role.isPending ? <p className="muted">Loading…</p> : <Outlet />}
      </main>
    </div>
  );
}

function Home() {
  const { session } = useSession();
  const role = useRole();
  if (session?.kind === 'portal') return <Navigate to={`/applications/${session.applicationId}/webhook`} replace />;
  return role.data === 'admin' ? <AdminHome /> : <AccountHome />;
}

const router = createHashRouter([
  {
    path: '/',
    element: <Shell />,
    children: [
      { index: true, element: <Home /> },
      { path: 'error-codes', element: <ErrorCodesPage /> },
      {
        path: 'applications/:applicationId',
        element: <ApplicationLayout />,
        children: [
          { index: true, element: <Navigate to="webhook" replace /> },
          { path: 'webhook', element: <WebhookPage /> },
          { path: 'subscriptions', element: <SubscriptionsPage /> },
          { path: 'deliveries', element: <DeliveriesPage /> },
          { path: 'deliveries/:deliveryId', element: <DeliveryPage /> },
          { path: 'events', element: <EventsPage /> },
          { path: 'endpoint', element: <EndpointPage /> },
        ],
      },
      { path: '*', element: <Navigate to="/" replace /> },
    ],
  },
]);

export function App() {
  return (
    <SessionProvider initial={initialSession()}>
      <RouterProvider router={router} />
    </SessionProvider>
  );
}
