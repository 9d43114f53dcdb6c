import { createElement, lazy, type ComponentType } from 'react';

/** A screen in its own chunk, and the way to start downloading it before it renders. */
export interface LazyPage {
  Page: ComponentType;
  preload(): Promise<unknown>;
}

function lazyPage<K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K): LazyPage {
  let loaded: ComponentType | undefined;
  // import() is cached by the module loader: a preload and the render share one download.
  const preload = (): Promise<ComponentType> => load().then((module) => (loaded = module[name]));
  const Suspending = lazy(async () => ({ default: await preload() }));
  // A chunk already here renders at once. React.lazy would suspend once even then, and React
  // holds a Suspense boundary's fallback for at least 300 ms once shown: measured, the log's first
  // screen lost ~400 ms to that.
  const Page = () => createElement(loaded ?? Suspending);
  return { Page, preload };
}

/**
 * Each screen is its own chunk, so a first screen downloads, parses and runs only its own code
 * (issue 26: the 100,000-delivery log's first screen waited for all of it, the forms'
 * react-hook-form included). The shell, the application's layout and the shared queries stay in
 * the entry chunk; first-screen.ts starts the address's own chunk with the page, and the others
 * follow once the browser is idle, so moving between screens waits for nothing.
 */
export const pages = {
  signIn: lazyPage(() => import('./pages/SignIn'), 'SignIn'),
  adminHome: lazyPage(() => import('./pages/AdminHome'), 'AdminHome'),
  accountHome: lazyPage(() => import('./pages/AccountHome'), 'AccountHome'),
  errorCodes: lazyPage(() => import('./pages/ErrorCodesPage'), 'ErrorCodesPage'),
  webhook: lazyPage(() => import('./pages/WebhookPage'), 'WebhookPage'),
  subscriptions: lazyPage(() => import('./pages/SubscriptionsPage'), 'SubscriptionsPage'),
  deliveries: lazyPage(() => import('./pages/DeliveriesPage'), 'DeliveriesPage'),
  delivery: lazyPage(() => import('./pages/DeliveryPage'), 'DeliveryPage'),
  events: lazyPage(() => import('./pages/EventsPage'), 'EventsPage'),
  event: lazyPage(() => import('./pages/EventPage'), 'EventPage'),
  endpoint: lazyPage(() => import('./pages/EndpointPage'), 'EndpointPage'),
  statistics: lazyPage(() => import('./pages/StatisticsPage'), 'StatisticsPage'),
  audit: lazyPage(() => import('./pages/AuditPage'), 'AuditPage'),
  adminAudit: lazyPage(() => import('./pages/AuditPage'), 'AdminAuditPage'),
};

/**
 * Every other screen's chunk, a few seconds after the start and when the browser has nothing to
 * do: an idle callback alone fires between the first screen's frames while its answers are on the
 * way, and parsing other screens then delays the first one on a busy 2-core machine.
 */
export function preloadEveryPageLater(): void {
  const preloadAll = () => Object.values(pages).forEach((page) => void page.preload());
  setTimeout(() => {
    if ('requestIdleCallback' in window) window.requestIdleCallback(preloadAll, { timeout: 5_000 });
    else preloadAll();
  }, 3_000);
}
