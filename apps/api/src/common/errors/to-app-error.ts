import { AppError, ErrorKind } from '@herald/contracts';
import { classifyDatabaseError } from '@herald/database';
import { HttpException } from '@nestjs/common';

/** How long a client should wait before retrying when the database is unreachable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Errors Fastify raises before a handler runs, by their code. */
const FASTIFY_ERRORS: Record<string, ErrorKind> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'BODY_NOT_JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BODY_NOT_JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BODY_NOT_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'BODY_NOT_JSON',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
};

const BY_STATUS: Record<number, ErrorKind> = {
  400: 'BAD_REQUEST',
  403: 'FORBIDDEN',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  // A content type other than JSON is 400-01 (PRODUCT §2); 415-00 is for a charset or an encoding.
  415: 'BODY_NOT_JSON',
  429: 'TOO_MANY_REQUESTS',
};

/**
 * Turns anything thrown while serving a request into a catalogue error. Null means it was not
 * expected: the caller logs it and answers 500-00.
 */
export function toAppError(exception: unknown): AppError | null {
  if (exception instanceof AppError) return exception;
  if (classifyDatabaseError(exception) === 'unavailable') {
    return new AppError('SERVICE_UNAVAILABLE', undefined, {
      headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      cause: exception,
    });
  }
  const fastifyCode = (exception as { code?: unknown })?.code;
  if (typeof fastifyCode === 'string' && FASTIFY_ERRORS[fastifyCode]) {
    return new AppError(FASTIFY_ERRORS[fastifyCode], describeFastifyError(fastifyCode, exception as Error));
  }
  const status = exception instanceof HttpException ? exception.getStatus() : (exception as { statusCode?: unknown })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500 && BY_STATUS[status]) {
    return new AppError(BY_STATUS[status]);
  }
  return null;
}

function describeFastifyError(code: string, error: Error): string | undefined {
  switch (code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'The request body must be JSON sent with Content-Type: application/json.';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The request body is too large.';
    default:
      return error.message;
  }
}
