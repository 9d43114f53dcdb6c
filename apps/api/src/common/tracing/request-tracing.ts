import { HeraldTracing, RequestSpan } from '@herald/runtime';
import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** Where a request keeps its server span, for the handler that publishes (RequestTrace). */
const REQUEST_SPAN = Symbol('herald.requestSpan');

type TracedFastifyRequest = FastifyRequest & { [REQUEST_SPAN]?: RequestSpan };

/**
 * A server span per API request (PRODUCT.md §16, HTTP semantic conventions), made by two
 * Fastify hooks rather than by instrumenting node:http. Registered only when traces are on, and
 * before every other hook, so that a request refused by the first of them (a bad request line)
 * has its span too. Without tracing no hook is added: a request costs nothing more.
 */
export function registerRequestTracing(fastify: FastifyInstance, tracing: HeraldTracing): void {
  if (!tracing.enabled) return;
  fastify.addHook('onRequest', (request, _reply, done) => {
    (request as TracedFastifyRequest)[REQUEST_SPAN] = tracing.startRequest({
      method: request.method,
      url: request.url,
      headers: request.headers,
      scheme: request.protocol,
      httpVersion: request.raw.httpVersion,
      clientAddress: request.ip,
      requestId: String(request.id),
    });
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    (request as TracedFastifyRequest)[REQUEST_SPAN]?.end(request.routeOptions.url, reply.statusCode);
    done();
  });
  fastify.addHook('onRequestAbort', (request, done) => {
    (request as TracedFastifyRequest)[REQUEST_SPAN]?.end(request.routeOptions.url, null);
    done();
  });
}

/** The request's server span, the parent of the publish a handler makes; null when traces are off. */
export function requestSpanOf(request: FastifyRequest): RequestSpan | null {
  return (request as TracedFastifyRequest)[REQUEST_SPAN] ?? null;
}

/** requestSpanOf for a Nest handler's parameter. */
export const RequestTrace = createParamDecorator((_data: unknown, context: ExecutionContext): RequestSpan | null =>
  requestSpanOf(context.switchToHttp().getRequest<FastifyRequest>()),
);
