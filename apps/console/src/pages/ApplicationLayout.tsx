import { NavLink, Outlet, useParams } from 'react-router';

export function useApplicationId(): number {
  const { applicationId } = useParams();
  return Number(applicationId);
}

export function ApplicationLayout() {
  const id = useApplicationId();
  if (!Number.isInteger(id) || id < 1) return <p className="error-banner">Not an application id.</p>;
  const tabs: [string, string][] = [
    ['webhook', 'Webhook'],
    ['subscriptions', 'Subscriptions'],
    ['deliveries', 'Deliveries'],
    ['events', 'Events'],
    ['endpoint', 'Secret and health'],
  ];
  return (
    <div className="stack">
      <h1>Application {id}</h1>
      <nav className="tabs" aria-label="Application">
        {tabs.map(([path, label]) => (
          <NavLink key={path} to={`/applications/${id}/${path}`}>
            {label}
          </NavLink>
        ))}
      </nav>
      <Outlet />
    </div>
  );
}
