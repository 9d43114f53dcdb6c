import { ApplicationScope } from '@herald/database';
import type { RequestSpan } from '@herald/runtime';
import { RequestMethod, Type } from '@nestjs/common';
import {
  EXCEPTION_FILTERS_METADATA,
  GUARDS_METADATA,
  HTTP_CODE_METADATA,
  INTERCEPTORS_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  PIPES_METADATA,
} from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApplicationAccess, ApplicationAccessGuard } from '../access/application-access.guard';
import { ADMIN_ONLY, AuthenticatedRequest, REFUSES_PORTAL_TOKENS } from '../auth/auth.decorators';
import { RequestAuthenticator, RouteAccessMarks } from '../auth/request-authenticator';
import { ErrorResponder } from '../errors/app-exception.filter';
import { requestSpanOf } from '../tracing/request-tracing';
import { RequestValidationPipe } from '../validation/request-validation.pipe';

/**
 * A body as its DTO instance when a compiled check can tell it is valid as sent, or null: the
 * DTO's own validation decides (and explains). Never accepts what the DTO would refuse.
 */
export type BodyAcceptor<Body> = (body: unknown) => Body | null;

/** A handler a direct route can call: an application's scope, the validated body and the request's span. */
type DirectHandler<Body> = (scope: ApplicationScope, body: Body, trace: RequestSpan | null) => Promise<unknown>;

type HandlerName<Controller, Body> = {
  [Name in keyof Controller]: Controller[Name] extends DirectHandler<Body> ? Name : never;
}[keyof Controller];

/**
 * A route of an application's controller that Fastify hands straight to its handler, past Nest's
 * router, guards, pipes and filters (issue 21, item 2: on the publish routes they were most of the
 * api's own cost per request). The controller method stays the route's one declaration — path,
 * method, status, portal refusal, OpenAPI — and the one handler; what Nest would run around it
 * runs here from the same implementations: RequestAuthenticator (ApiKeyGuard's), ApplicationAccess
 * (ApplicationAccessGuard's), the DTO's validation (RequestValidationPipe, after a compiled
 * check that takes the common valid body without it: BodyAcceptor) and ErrorResponder
 * (AppExceptionFilter's). Fastify's own hooks and body parser — request id, request-line checks,
 * encodings, body limits, UTF-8 and depth, tracing, metrics and the access log — run as for
 * every route.
 */
export interface DirectRoute<Controller = unknown, Body = unknown> {
  controller: Type<Controller>;
  handler: HandlerName<Controller, Body>;
  body: Type<Body>;
  accept: BodyAcceptor<Body>;
}

export function directRoute<Controller, Body>(
  controller: Type<Controller>,
  handler: HandlerName<Controller, Body>,
  body: Type<Body>,
  accept: BodyAcceptor<Body>,
): DirectRoute {
  return { controller, handler, body, accept } as DirectRoute;
}

type ScopedRequest = AuthenticatedRequest & { params: Record<string, string | undefined> };

/**
 * Makes `routes` direct: as Nest registers each of them with Fastify, its handler is replaced by
 * one that runs the shared rules and calls the controller method. Call before init(), as
 * configureApp does. Throws at start-up when a route's controller or method declares a guard,
 * interceptor, pipe or filter beyond ApplicationAccessGuard: a direct route would skip it.
 */
export function registerDirectRoutes(
  app: NestFastifyApplication,
  fastify: FastifyInstance,
  errors: ErrorResponder,
  routes: DirectRoute[],
): void {
  const byRoute = new Map(routes.map((route) => [routeKey(route), route]));
  const reflector = app.get(Reflector);
  const authenticator = app.get(RequestAuthenticator);
  const access = app.get(ApplicationAccess);
  const validation = new RequestValidationPipe();

  fastify.addHook('onRoute', (options) => {
    const methods = [options.method].flat();
    const route = methods.length === 1 ? byRoute.get(`${methods[0]} ${options.url}`) : undefined;
    if (!route) return;
    const method = route.controller.prototype[route.handler] as DirectHandler<unknown>;
    assertNothingSkipped(route, method);
    const marks: RouteAccessMarks = {
      adminOnly: reflector.getAllAndOverride<boolean>(ADMIN_ONLY, [method, route.controller]) === true,
      refusesPortalTokens: reflector.getAllAndOverride<boolean>(REFUSES_PORTAL_TOKENS, [method, route.controller]) === true,
    };
    const status = (Reflect.getMetadata(HTTP_CODE_METADATA, method) as number | undefined) ?? 201;
    const controller = app.get(route.controller);
    const metatype = route.body;

    // Returns the reply: Fastify then knows the answer was sent by the handler.
    options.handler = async function direct(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
      try {
        const principal = await authenticator.authenticate(request, marks);
        const scope = await access.scopeFor(principal, (request as ScopedRequest).params.application_id);
        const body = route.accept(request.body) ?? validation.transform(request.body, { type: 'body', metatype });
        const result = await method.call(controller, scope, body, requestSpanOf(request));
        return reply.status(status).send(result);
      } catch (error) {
        errors.send(error, request, reply);
        return reply;
      }
    };
  });
}

/** `POST /application/:application_id/events`: the method and Fastify URL Nest registers the handler under. */
function routeKey(route: DirectRoute): string {
  const method = route.controller.prototype[route.handler as string] as object;
  const verb = RequestMethod[Reflect.getMetadata(METHOD_METADATA, method) as RequestMethod];
  const path = [Reflect.getMetadata(PATH_METADATA, route.controller), Reflect.getMetadata(PATH_METADATA, method)]
    .map((part: string | undefined) => (part ?? '').replace(/^\/+|\/+$/g, ''))
    .filter((part) => part !== '')
    .join('/');
  return `${verb} /${path}`;
}

function assertNothingSkipped(route: DirectRoute, method: object): void {
  const declared = (key: string, target: object) => (Reflect.getMetadata(key, target) as unknown[] | undefined) ?? [];
  const classGuards = declared(GUARDS_METADATA, route.controller);
  const extras = [
    ...classGuards.filter((guard) => guard !== ApplicationAccessGuard),
    ...[GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA].flatMap((key) => declared(key, method)),
    ...[INTERCEPTORS_METADATA, PIPES_METADATA, EXCEPTION_FILTERS_METADATA].flatMap((key) => declared(key, route.controller)),
  ];
  if (!classGuards.includes(ApplicationAccessGuard) || extras.length > 0) {
    throw new Error(
      `${route.controller.name}.${String(route.handler)} cannot be a direct route: it must be an application's route (ApplicationAccessGuard) with no other guard, interceptor, pipe or filter`,
    );
  }
}
