export const EVENT_TYPE_NAME_MAX_LENGTH = 64;

/** Event names: lowercase letters, digits, `_` and `.`, 1 to EVENT_TYPE_NAME_MAX_LENGTH characters. */
export const EVENT_TYPE_NAME_PATTERN = new RegExp(`^[a-z0-9_.]{1,${EVENT_TYPE_NAME_MAX_LENGTH}}$`);

/** Delivered by `POST /application/{id}/webhook/test` whether or not the application subscribes. */
export const TEST_EVENT_TYPE = 'webhook.test';

/**
 * What Herald sends to the operator's operational webhook (PRODUCT.md §10). They name an
 * application, but they are the operator's: never listed to customers, published by them, or
 * subscribed to.
 */
export const OPERATIONAL_EVENT_TYPES = [
  'webhook.disabled',
  'webhook.enabled',
  'delivery.exhausted',
  'webhook.failing',
  'webhook.recovered',
] as const;
export type OperationalEventType = (typeof OPERATIONAL_EVENT_TYPES)[number];

export function isOperationalEventType(name: string): name is OperationalEventType {
  return (OPERATIONAL_EVENT_TYPES as readonly string[]).includes(name);
}
