import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const REQUEST_ID_HEADER = 'x-request-id';
const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A caller's X-Request-Id is kept when it is safe to log and echo; otherwise Herald makes one
 * (randomUUID draws from a pooled entropy buffer: cheap enough for every request).
 */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  if (typeof given === 'string' && ACCEPTABLE.test(given)) return given;
  return newRequestId();
}

export function newRequestId(): string {
  // The first 16 hex digits of a UUID (xxxxxxxx-xxxx-4xxx-…), cut out without a regular expression.
  const uuid = randomUUID();
  return `req_${uuid.slice(0, 8)}${uuid.slice(9, 13)}${uuid.slice(14, 18)}`;
}
