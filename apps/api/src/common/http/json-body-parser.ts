import { AppError } from '@herald/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bodyLimitFor, largestBodyLimit } from './body-limits';

/** Deeper bodies are refused (400-01): no DTO nests past 3 levels, and payloads rarely past 10. */
export const MAX_JSON_DEPTH = 32;

/**
 * Replaces Fastify's JSON parser so that every body problem answers with a directory code.
 * The seed sends `Content-Type: application/json` on every request, bodyless ones included, so
 * an empty body is simply no body; a route that needs one answers 400-01 from the validation
 * pipe. A body over its route's limit is a 413-00; a charset other than UTF-8 or any
 * Content-Encoding is a 415-00 (Herald would otherwise read the bytes as something they are not).
 *
 * Plain JSON.parse, not secure-json-parse: customers' maps (headers, payloads) are kept exactly,
 * `__proto__` and `constructor` keys included (PRODUCT §2). JSON.parse makes such keys ordinary
 * own properties; the validation pipe keeps them away from anything that assigns them.
 */
export function registerJsonBodyParser(fastify: FastifyInstance): void {
  fastify.removeContentTypeParser(['application/json']);
  fastify.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: largestBodyLimit() },
    (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void) => {
      const unsupported = describeUnsupportedEncoding(request.headers['content-type'], request.headers['content-encoding']);
      if (unsupported) return done(new AppError('UNSUPPORTED_MEDIA_TYPE', unsupported));
      const limit = bodyLimitFor(request.routeOptions?.url);
      if (body.length > limit) {
        return done(new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`));
      }
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, undefined);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        return done(new AppError('BODY_NOT_JSON', `The request body is not valid JSON: ${(error as Error).message}`));
      }
      if (nestingDepthExceeds(parsed, MAX_JSON_DEPTH)) {
        return done(new AppError('BODY_NOT_JSON', `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`));
      }
      done(null, parsed);
    },
  );
}

/** Null when the body can be read as UTF-8 JSON as sent. */
export function describeUnsupportedEncoding(contentType: string | undefined, contentEncoding: string | string[] | undefined): string | null {
  const encodings = [contentEncoding ?? []].flat().flatMap((value) => value.split(','));
  const coded = encodings.map((value) => value.trim().toLowerCase()).filter((value) => value !== '' && value !== 'identity');
  if (coded.length > 0) return `Content-Encoding ${coded.join(', ')} is not supported; send the JSON body uncompressed.`;
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    return `charset=${charset} is not supported; send the JSON body as UTF-8.`;
  }
  return null;
}

/** Iterative, so a hostile depth cannot overflow the stack; stops at the first branch too deep. */
export function nestingDepthExceeds(value: unknown, maxDepth: number): boolean {
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 1 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}
