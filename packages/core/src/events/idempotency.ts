import { createHash } from 'node:crypto';

/**
 * Idempotent publishing (PRODUCT.md §5): a key is remembered per application for this long; a
 * publish under a key taken within it is not stored again.
 */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

/**
 * What a key remembers of the request that took it: the event name, payload and ordering key,
 * hashed (without an ordering key, as before keys existed, so held keys still match).
 */
export function idempotencyRequestHash(eventType: string, payload: unknown, orderingKey: string | null = null): string {
  return createHash('sha256')
    .update(JSON.stringify(orderingKey === null ? [eventType, payload] : [eventType, payload, orderingKey]))
    .digest('hex');
}

/**
 * A publish under a key an earlier publish took (and still holds): the same request gets that
 * publish's answer again; another request under the same key is refused (400-07).
 */
export function repeatedKeyOutcome(firstRequestHash: string, requestHash: string): 'replay' | 'key_reused' {
  return firstRequestHash === requestHash ? 'replay' : 'key_reused';
}
