/**
 * The audit log (PRODUCT.md §16): one record per change to configuration or access. What an
 * action is called and how a record's `changes` are made live here, so the api and the worker
 * (auto-disable, as `system`) write them alike.
 */

/** Every action a record can name. A new audited operation adds its action here. */
export const AUDIT_ACTIONS = [
  'account.created',
  'application.created',
  'api_key.created',
  /** HERALD_ADMIN_KEY changed: the bootstrap admin key's row now holds the new key's hash. */
  'api_key.updated',
  'api_key.revoked',
  'event_type.created',
  'event_type.updated',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'webhook.secret_read',
  'webhook.secret_rotated',
  'webhook.disabled',
  'webhook.enabled',
  'webhook.throttle_updated',
  'subscription.created',
  'subscription.updated',
  'subscription.deleted',
  'subscription.filter_updated',
  'subscription.filter_deleted',
  'portal_link.created',
  'portal_links.revoked',
  'operational_webhook.created',
  'operational_webhook.updated',
  'operational_webhook.deleted',
  'operational_webhook.secret_read',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Who acted: an admin key, an account's key, a customer portal link, or Herald itself. */
export const AUDIT_ACTOR_TYPES = ['admin_key', 'api_key', 'portal_link', 'system'] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

export interface AuditActor {
  type: AuditActorType;
  /** The key's or portal link's id; for `system`, the part of Herald that acted (`auto-disable`). */
  id: string;
  /** A key's display prefix (never more of the key); null for portal links and `system`. */
  prefix: string | null;
}

/** The worker's auto-disable job (PRODUCT.md §10). */
export const AUTO_DISABLE_ACTOR: AuditActor = { type: 'system', id: 'auto-disable', prefix: null };
/** Start-up, applying HERALD_ADMIN_KEY. */
export const ADMIN_KEY_VARIABLE_ACTOR: AuditActor = { type: 'system', id: 'HERALD_ADMIN_KEY', prefix: null };

/** What a value that must never be written (an extra header's value) is written as. */
export const REDACTED = '[redacted]';

/** `{ "<field>": [before, after] }`: only the fields that changed; null stands for "not there". */
export type AuditChanges = Record<string, [unknown, unknown]>;

/**
 * The fields that differ between two states of one thing, each as [before, after]. A state is a
 * flat map of field names (the api's own: `retry_config.max_retries`, `headers.X-Api-Token`) to
 * JSON values; null stands for "did not exist" (a creation, a deletion), and a field missing on
 * one side is null there. Values are compared as JSON. Fields `redact` names are compared by
 * their real values and written as REDACTED, so a changed header value shows as changed without
 * showing either value.
 */
export function auditChanges(
  before: Readonly<Record<string, unknown>> | null,
  after: Readonly<Record<string, unknown>> | null,
  redact: (field: string) => boolean = () => false,
): AuditChanges {
  const fields = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])];
  const changed: [string, [unknown, unknown]][] = [];
  for (const field of fields) {
    const was = valueOf(before, field);
    const is = valueOf(after, field);
    if (JSON.stringify(was) === JSON.stringify(is)) continue;
    const shown = (value: unknown) => (value !== null && redact(field) ? REDACTED : value);
    changed.push([field, [shown(was), shown(is)]]);
  }
  // fromEntries defines own properties: a field named after an Object.prototype member is just a key.
  return Object.fromEntries(changed);
}

/** Header maps flattened to `headers.<name>` fields, for auditChanges with `isHeaderField` as `redact`. */
export function headerFields(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [`${HEADER_FIELD}${name}`, value]));
}

const HEADER_FIELD = 'headers.';

/** Extra headers' values are never written (PRODUCT.md §16); their names are. */
export function isHeaderField(field: string): boolean {
  return field.startsWith(HEADER_FIELD);
}

function valueOf(state: Readonly<Record<string, unknown>> | null, field: string): unknown {
  if (state === null || !Object.prototype.hasOwnProperty.call(state, field)) return null;
  return state[field] ?? null;
}
