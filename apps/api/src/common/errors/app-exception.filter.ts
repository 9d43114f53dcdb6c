import { AppError, quoteInput } from '@herald/contracts';
import { ArgumentsHost, Catch, ExceptionFilter, LoggerService } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { REQUEST_ID_HEADER } from '../http/request-id';
import { RouteTable } from '../http/route-table';
import { errorEnvelope } from './error-envelope';
import { toAppError, UNAVAILABLE_RETRY_AFTER_SECONDS } from './to-app-error';

/**
 * The one place an error becomes a response. Every non-2xx answer, on every route, leaves here
 * with the envelope of PRODUCT.md §2 and a code from the directory: through AppExceptionFilter
 * on Nest's routes, directly from the direct routes (direct-routes.ts). Unexpected errors are
 * logged with the request id and answered 500-00 without internals.
 */
export class ErrorResponder {
  constructor(
    private readonly routes: RouteTable,
    private readonly logger: LoggerService,
  ) {}

  send(exception: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const error = this.resolve(exception, request);

    if (error.status >= 500) {
      this.logger.error(
        { err: exception, requestId: request.id, method: request.method, url: request.url },
        error.code === '500-00' ? 'unexpected error while serving a request' : error.message,
      );
    }
    if (reply.sent) return;
    // Set again here: a request Fastify could not route may skip the onRequest hook that sets it.
    reply.header(REQUEST_ID_HEADER, request.id);
    reply
      .status(error.status)
      .headers(responseHeaders(error))
      .send(errorEnvelope(error, String(request.id)));
  }

  private resolve(exception: unknown, request: FastifyRequest): AppError {
    const error = toAppError(exception) ?? new AppError('INTERNAL_ERROR', undefined, { cause: exception });
    if (error.code !== '404-00') return error;
    const allowed = this.routes.allowedMethods(request.url);
    if (allowed.length > 0) {
      return new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed here; use ${allowed.join(', ')}.`, {
        headers: { allow: allowed.join(', ') },
      });
    }
    return new AppError('ROUTE_NOT_FOUND', `No route matches ${request.method} ${quoteInput(request.url.split('?')[0])}.`);
  }
}

/** Every error on Nest's routes, answered by the ErrorResponder. */
@Catch()
export class AppExceptionFilter implements ExceptionFilter {
  constructor(private readonly errors: ErrorResponder) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.errors.send(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }
}

/** Every 503 tells the client when to come back (PRODUCT §7), whoever raised it. */
function responseHeaders(error: AppError): Record<string, string> {
  const headers = error.headers ?? {};
  if (error.status === 503 && !Object.keys(headers).some((name) => name.toLowerCase() === 'retry-after')) {
    return { ...headers, 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) };
  }
  return headers;
}
