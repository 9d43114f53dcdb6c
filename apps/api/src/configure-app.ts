import { HeraldTracing, NestPinoLogger, TRACING } from '@herald/runtime';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppExceptionFilter, ErrorResponder } from './common/errors/app-exception.filter';
import { errorEnvelope } from './common/errors/error-envelope';
import { registerDirectRoutes } from './common/http/direct-routes';
import { registerJsonBodyParser } from './common/http/json-body-parser';
import { answerConnectRequests, requestLineProblem } from './common/http/protocol-errors';
import { REQUEST_ID_HEADER } from './common/http/request-id';
import { RouteTable } from './common/http/route-table';
import { registerRequestTracing } from './common/tracing/request-tracing';
import { setupSwagger } from './common/swagger/swagger';
import { RequestValidationPipe } from './common/validation/request-validation.pipe';
import { DIRECT_PUBLISH_ROUTES } from './events/publish-routes';
import { ApiMetrics } from './metrics/api-metrics';

/** Probed by orchestrators and Prometheus every few seconds: not worth a log line each. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Everything the HTTP pipeline needs beyond the modules. main.ts and every e2e test call this,
 * so tests exercise the production wiring. Call it before init()/listen(): the route table and
 * the body parser must be in place before routes are registered.
 */
export function configureApp(app: NestFastifyApplication): void {
  const fastify = app.getHttpAdapter().getInstance();
  registerRequestTracing(fastify, app.get<symbol, HeraldTracing>(TRACING));
  const routes = new RouteTable();
  routes.listen(fastify);
  registerJsonBodyParser(fastify);
  const metrics = app.get(ApiMetrics);
  answerConnectRequests(app.getHttpServer(), fastify);
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    const problem = requestLineProblem(request);
    if (problem) {
      void reply.status(problem.status).send(errorEnvelope(problem, String(request.id)));
      return;
    }
    done();
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(request.method, request.routeOptions.url, reply.statusCode, reply.elapsedTime);
    const path = request.url.split('?')[0];
    if (!QUIET_PATHS.has(path)) {
      const level = reply.statusCode >= 500 ? 'error' : reply.statusCode >= 400 ? 'warn' : 'info';
      request.log[level](
        { method: request.method, url: request.url, statusCode: reply.statusCode, responseTimeMs: Math.round(reply.elapsedTime) },
        'request completed',
      );
    }
    done();
  });

  const logger = new NestPinoLogger(fastify.log as never);
  app.useLogger(logger);
  app.useGlobalPipes(new RequestValidationPipe());
  const errors = new ErrorResponder(routes, logger);
  app.useGlobalFilters(new AppExceptionFilter(errors));
  // Nothing global may be added around Nest's routes (an interceptor, another guard) without
  // adding it to the direct routes too: they run only what direct-routes.ts lists.
  registerDirectRoutes(app, fastify, errors, DIRECT_PUBLISH_ROUTES);
  // Exit once shut down instead of re-raising the signal (Nest's default): a process killed by its
  // signal never emits 'exit', where the logger writes the lines still waiting for their batch.
  app.enableShutdownHooks(undefined, { useProcessExit: true });
  setupSwagger(app);
}
