import { ERROR_CATALOGUE, ErrorKind, ErrorResponse, statusOf } from '@herald/contracts';
import { ApiResponse, DECORATORS } from '@nestjs/swagger';

/**
 * Errors the HTTP layer answers on every route, before a handler runs: a request that is not
 * valid HTTP (400-00), bad percent-encoding in the query (400-03), a request that never finishes
 * (408-00), a URL over 8 KiB (414-00), headers over 16 KiB (431-00), and anything unexpected.
 */
export const HTTP_ERRORS: ErrorKind[] = [
  'BAD_REQUEST',
  'INVALID_PARAMETER',
  'REQUEST_TIMEOUT',
  'URI_TOO_LONG',
  'HEADERS_TOO_LARGE',
  'INTERNAL_ERROR',
];
/** Plus those of every route that needs an API key (and so reads the database). */
export const AUTH_ERRORS: ErrorKind[] = [...HTTP_ERRORS, 'API_KEY_MISSING', 'API_KEY_INVALID', 'TOO_MANY_REQUESTS', 'SERVICE_UNAVAILABLE'];
/** Plus those of every route under /application/{application_id}. */
export const APPLICATION_ERRORS: ErrorKind[] = [...AUTH_ERRORS, 'APPLICATION_NOT_FOUND', 'APPLICATION_FORBIDDEN'];
/** Plus those of every route that takes a JSON body. */
export const BODY_ERRORS: ErrorKind[] = ['BODY_NOT_JSON', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'];

const ERROR_KINDS = 'herald:api-errors';

/**
 * Documents the error responses of a route or of every route of a controller, grouped by
 * status, each code with its directory message. On a controller and on one of its routes the
 * two lists add up: Nest lets a route's response for a status replace the controller's, so the
 * route gets the controller's codes of that status too.
 */
export function ApiErrors(...kinds: ErrorKind[]): MethodDecorator & ClassDecorator {
  return (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    if (descriptor) {
      documentErrors(descriptor.value as object, addKinds(descriptor.value as object, kinds));
      return;
    }
    // Class decorators run after the decorators of the class's methods.
    const controllerKinds = addKinds(target, kinds);
    documentErrors(target, controllerKinds);
    const prototype = (target as { prototype: Record<string, unknown> }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = Object.getOwnPropertyDescriptor(prototype, name)?.value as object | undefined;
      const own = typeof handler === 'function' ? (Reflect.getMetadata(ERROR_KINDS, handler) as ErrorKind[] | undefined) : undefined;
      if (handler && own) documentErrors(handler, [...controllerKinds, ...own]);
    }
  };
}

function addKinds(target: object, kinds: ErrorKind[]): ErrorKind[] {
  const all = [...((Reflect.getMetadata(ERROR_KINDS, target) as ErrorKind[] | undefined) ?? []), ...kinds];
  Reflect.defineMetadata(ERROR_KINDS, all, target);
  return all;
}

/** Writes one response per status, replacing what was there (ApiResponse would append the descriptions). */
function documentErrors(target: object, kinds: ErrorKind[]): void {
  const byStatus = new Map<number, string[]>();
  const entries = [...new Set(kinds)].map((kind) => ERROR_CATALOGUE[kind]).sort((a, b) => a.code.localeCompare(b.code));
  for (const { code, message } of entries) {
    const status = statusOf(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), `\`${code}\` ${message}`]);
  }
  const existing = (Reflect.getMetadata(DECORATORS.API_RESPONSE, target) as Record<string, unknown> | undefined) ?? {};
  const kept = Object.fromEntries(Object.entries(existing).filter(([status]) => !byStatus.has(Number(status))));
  Reflect.defineMetadata(DECORATORS.API_RESPONSE, kept, target);
  for (const [status, lines] of byStatus) {
    // Nest keeps a route's responses on the handler function and a controller's on the class:
    // either way, on the object passed as the descriptor's value.
    ApiResponse({ status, type: ErrorResponse, description: lines.join('<br>') })(target, '', { value: target });
  }
}
