/**
 * The credential lives in sessionStorage only (PRODUCT.md §12): gone when the tab closes, never in
 * localStorage or a cookie. A portal session also remembers the one application it may see.
 */
const KEY = 'herald.credential';
const PORTAL_APP = 'herald.portalApplication';

export type Session = { kind: 'key'; credential: string } | { kind: 'portal'; credential: string; applicationId: number };

export function readSession(storage: Storage = sessionStorage): Session | null {
  const credential = storage.getItem(KEY);
  if (!credential) return null;
  const app = storage.getItem(PORTAL_APP);
  if (credential.startsWith('hp_') && app && /^\d+$/.test(app)) return { kind: 'portal', credential, applicationId: Number(app) };
  return { kind: 'key', credential };
}

export function saveSession(session: Session, storage: Storage = sessionStorage): void {
  storage.setItem(KEY, session.credential);
  if (session.kind === 'portal') storage.setItem(PORTAL_APP, String(session.applicationId));
  else storage.removeItem(PORTAL_APP);
}

export function clearSession(storage: Storage = sessionStorage): void {
  storage.removeItem(KEY);
  storage.removeItem(PORTAL_APP);
}

/**
 * A portal link opens `/console/#/portal?application=42&token=hp_…` (or `#/portal/42?token=…`).
 * Returns what it carries, or null when the fragment is not a portal link.
 */
export function portalLinkFromHash(hash: string): { token: string; applicationId: number } | null {
  const match = /^#\/portal(?:\/(\d+))?\/?(?:\?(.*))?$/.exec(hash);
  if (!match) return null;
  const params = new URLSearchParams(match[2] ?? '');
  const token = params.get('token');
  const app = match[1] ?? params.get('application') ?? params.get('application_id');
  if (!token || !token.startsWith('hp_') || !app || !/^\d+$/.test(app)) return null;
  return { token, applicationId: Number(app) };
}
