import type { Schemas } from '@herald/client';

export type AuditRecord = Schemas['AuditRecordDto'];
export type AuditAction = AuditRecord['action'];

/**
 * Every action the api records, in words. A Record over the API's own union: an action added to
 * or removed from the api fails the console's type-check until it is named here too.
 */
export const ACTION_WORDS: Record<AuditAction, string> = {
  'account.created': 'Account created',
  'application.created': 'Application created',
  'api_key.created': 'API key created',
  'api_key.updated': 'Admin key replaced (HERALD_ADMIN_KEY)',
  'api_key.revoked': 'API key revoked',
  'event_type.created': 'Event type created',
  'event_type.updated': 'Event type changed',
  'webhook.created': 'Webhook created',
  'webhook.updated': 'Webhook changed',
  'webhook.deleted': 'Webhook deleted',
  'webhook.secret_read': 'Signing secret read',
  'webhook.secret_rotated': 'Signing secret rotated',
  'webhook.disabled': 'Endpoint disabled',
  'webhook.enabled': 'Endpoint enabled',
  'webhook.throttle_updated': 'Rate limit changed',
  'subscription.created': 'Subscription added',
  'subscription.updated': 'Subscription changed',
  'subscription.deleted': 'Subscription deleted',
  'subscription.filter_updated': 'Subscription filter set',
  'subscription.filter_deleted': 'Subscription filter removed',
  'portal_link.created': 'Portal link created',
  'portal_links.revoked': 'Portal links revoked',
  'operational_webhook.created': 'Operational webhook set',
  'operational_webhook.updated': 'Operational webhook changed',
  'operational_webhook.deleted': 'Operational webhook removed',
  'operational_webhook.secret_read': 'Operational secret read',
};

export const AUDIT_ACTIONS = Object.keys(ACTION_WORDS) as AuditAction[];

/** Who acted, in words: the kind of credential and what identifies it without revealing it. */
export function actorWords(actor: AuditRecord['actor']): { who: string; which: string } {
  switch (actor.type) {
    case 'admin_key':
      return { who: 'Operator key', which: actor.prefix ?? actor.id };
    case 'api_key':
      return { who: 'API key', which: actor.prefix ?? actor.id };
    case 'portal_link':
      return { who: 'Portal link', which: actor.id };
    case 'system':
      return { who: 'Herald', which: actor.id };
  }
}

/** A value of a change as text: "none" for null (did not exist), JSON for anything but a string. */
export function changeValue(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
