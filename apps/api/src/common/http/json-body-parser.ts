import { AppError } from '@herald/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bodyLimitFor, largestBodyLimit } from './body-limits';

/**
 * Replaces Fastify's JSON parser so that every body problem answers with a directory code.
 * The seed sends `Content-Type: application/json` on every request, bodyless ones included, so
 * an empty body is simply no body; a route that needs one answers 400-01 from the validation
 * pipe. A body over its route's limit is a 413-00. Parsing itself stays Fastify's
 * (secure-json-parse, prototype poisoning refused).
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
      if (text.trim() === '') return done(null, undefined);
      parseJson(request, text, (error, parsed) => {
        if (error) return done(new AppError('BODY_NOT_JSON', `The request body is not valid JSON: ${error.message}`));
        done(null, parsed);
      });
    },
  );
}
