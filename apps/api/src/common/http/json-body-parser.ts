import { AppError } from '@herald/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bodyLimitFor, largestBodyLimit } from './body-limits';

const METHODS_WITHOUT_BODY = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/**
 * Replaces Fastify's JSON parser so that every body problem answers with a directory code:
 * an empty body on a PUT or POST is a 400-01 (the seed sends Content-Type: application/json on
 * GET and DELETE too, so an empty body there is simply no body); a body over its route's limit
 * is a 413-00. Parsing itself stays Fastify's (secure-json-parse, prototype poisoning refused).
 */
export function registerJsonBodyParser(fastify: FastifyInstance): void {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser(['application/json']);
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: largestBodyLimit() },
    (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      const limit = bodyLimitFor(request.routeOptions?.url);
      if (Buffer.byteLength(text) > limit) {
        return done(new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`));
      }
      if (text.trim() === '') {
        if (METHODS_WITHOUT_BODY.has(request.method)) return done(null, undefined);
        return done(new AppError('BODY_NOT_JSON', 'The request body is empty; send a JSON object.'));
      }
      parseJson(request, text, (error, parsed) => {
        if (error) return done(new AppError('BODY_NOT_JSON', `The request body is not valid JSON: ${error.message}`));
        done(null, parsed);
      });
    },
  );
}
