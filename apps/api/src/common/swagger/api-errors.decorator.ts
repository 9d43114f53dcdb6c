import { ERROR_CATALOGUE, ErrorKind, ErrorResponse, statusOf } from '@herald/contracts';
import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';

/** Errors every authenticated route can answer with. */
export const AUTH_ERRORS: ErrorKind[] = [
  'API_KEY_MISSING',
  'API_KEY_INVALID',
  'TOO_MANY_REQUESTS',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
];
/** Plus those of every route under /application/{application_id}. */
export const APPLICATION_ERRORS: ErrorKind[] = [...AUTH_ERRORS, 'INVALID_PARAMETER', 'APPLICATION_NOT_FOUND', 'APPLICATION_FORBIDDEN'];
/** Plus those of every route that takes a JSON body. */
export const BODY_ERRORS: ErrorKind[] = ['BODY_NOT_JSON', 'VALIDATION_FAILED', 'PAYLOAD_TOO_LARGE'];

/** Documents the error responses of a route, grouped by status, each code with its directory message. */
export function ApiErrors(...kinds: ErrorKind[]): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, string[]>();
  for (const kind of new Set(kinds)) {
    const { code, message } = ERROR_CATALOGUE[kind];
    const status = statusOf(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), `\`${code}\` ${message}`]);
  }
  return applyDecorators(
    ...[...byStatus.entries()]
      .sort(([a], [b]) => a - b)
      .map(([status, lines]) => ApiResponse({ status, type: ErrorResponse, description: lines.join('<br>') })),
  );
}
