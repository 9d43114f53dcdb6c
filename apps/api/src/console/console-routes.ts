import fastifyStatic from '@fastify/static';
import { AppError } from '@herald/contracts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { errorEnvelope } from '../common/errors/error-envelope';

/** Where the built console lives; a provider so tests can point it at a missing or fake build. */
export const CONSOLE_DIST_DIR = Symbol('CONSOLE_DIST_DIR');

/** apps/console/dist, seen from apps/api/dist/console (or apps/api/src/console under ts-jest). */
export function defaultConsoleDistDir(): string {
  return path.resolve(__dirname, '../../../console/dist');
}

/**
 * Everything the page needs comes from this origin; nothing inline (React sets no inline styles
 * here: the console uses class names only). Framing is allowed from anywhere because the
 * customer portal is meant to be embedded in the platform's own product.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  'frame-ancestors *',
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable';

function securityHeaders(reply: FastifyReply): void {
  void reply.header('content-security-policy', CONSOLE_CSP);
  void reply.header('x-content-type-options', 'nosniff');
  void reply.header('referrer-policy', 'no-referrer');
}

/**
 * GET /console and /console/ answer index.html (never cached: it names the current hashed
 * assets); /console/assets/* are content-hashed, so cached for a year. Without a build, every
 * /console path answers 404-00 saying so — a missing build is not a server error.
 */
export function registerConsoleRoutes(fastify: FastifyInstance, distDir: string): void {
  const indexFile = path.join(distDir, 'index.html');
  const built = existsSync(indexFile);

  if (!built) {
    const notBuilt = (request: FastifyRequest, reply: FastifyReply): void => {
      const error = new AppError('ROUTE_NOT_FOUND', 'The console was not built: run `pnpm build` (it writes apps/console/dist).');
      void reply.status(error.status).send(errorEnvelope(error, String(request.id)));
    };
    fastify.get('/console', notBuilt);
    fastify.get('/console/*', notBuilt);
    return;
  }

  // Read once: the build does not change under a running api.
  const index = readFileSync(indexFile);
  const sendIndex = (_request: FastifyRequest, reply: FastifyReply): void => {
    securityHeaders(reply);
    void reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(index);
  };
  fastify.get('/console', sendIndex);
  fastify.get('/console/', sendIndex);

  void fastify.register(fastifyStatic, {
    root: path.join(distDir, 'assets'),
    prefix: '/console/assets/',
    // @nestjs/swagger registers the plugin already, with the reply decorators.
    decorateReply: false,
    index: false,
    list: false,
    dotfiles: 'deny',
    cacheControl: false,
    setHeaders: (res) => {
      void res.header('content-security-policy', CONSOLE_CSP);
      void res.header('x-content-type-options', 'nosniff');
      void res.header('cache-control', IMMUTABLE);
    },
  });
}
