import { MAX_BATCH_BODY_BYTES, MAX_EVENT_TYPE_EXAMPLE_BYTES, MAX_EVENT_TYPE_SCHEMA_BYTES } from '@herald/contracts';

/** Configuration bodies are small; a larger body is refused with 413-00 before it is parsed. */
export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

/** An event type: a schema and an example of up to 64 KiB each, room for whitespace, and its description. */
const EVENT_TYPE_BODY_LIMIT_BYTES = MAX_EVENT_TYPE_SCHEMA_BYTES + MAX_EVENT_TYPE_EXAMPLE_BYTES + 16 * 1024;

/**
 * Routes allowed a larger body, by route pattern. Publishing carries a payload of up to
 * 256 KiB (checked on the payload itself) plus the envelope around it; a batch many of them.
 */
const ROUTE_BODY_LIMITS: ReadonlyMap<string, number> = new Map([
  ['/application/:application_id/events', 320 * 1024],
  // A batch (PRODUCT.md §5.1): up to 1,000 events in at most 5 MiB.
  ['/application/:application_id/events/batch', MAX_BATCH_BODY_BYTES],
  ['/admin/event_types', EVENT_TYPE_BODY_LIMIT_BYTES],
  ['/admin/event_types/:name', EVENT_TYPE_BODY_LIMIT_BYTES],
]);

/** The most any route accepts; Fastify stops reading a body past this. */
export function largestBodyLimit(): number {
  return Math.max(DEFAULT_BODY_LIMIT_BYTES, ...ROUTE_BODY_LIMITS.values());
}

export function bodyLimitFor(routePattern: string | undefined): number {
  return (routePattern && ROUTE_BODY_LIMITS.get(routePattern)) || DEFAULT_BODY_LIMIT_BYTES;
}
