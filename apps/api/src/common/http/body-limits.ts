/** Configuration bodies are small; a larger body is refused with 413-00 before it is parsed. */
export const DEFAULT_BODY_LIMIT_BYTES = 64 * 1024;

/** Routes allowed a larger body than the default, by route pattern. */
const ROUTE_BODY_LIMITS = new Map<string, number>();

/** The most any route accepts; Fastify stops reading a body past this. */
export function largestBodyLimit(): number {
  return Math.max(DEFAULT_BODY_LIMIT_BYTES, ...ROUTE_BODY_LIMITS.values());
}

export function bodyLimitFor(routePattern: string | undefined): number {
  return (routePattern && ROUTE_BODY_LIMITS.get(routePattern)) || DEFAULT_BODY_LIMIT_BYTES;
}

export function allowLargerBody(routePattern: string, bytes: number): void {
  ROUTE_BODY_LIMITS.set(routePattern, bytes);
}
