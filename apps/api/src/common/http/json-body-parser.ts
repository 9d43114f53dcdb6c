import { AppError } from '@herald/contracts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bodyLimitFor, largestBodyLimit } from './body-limits';

/** Deeper bodies are refused (400-01): no DTO nests past 3 levels, and payloads rarely past 10. */
export const MAX_JSON_DEPTH = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Replaces Fastify's JSON parser so that every body problem answers with a directory code.
 * The seed sends `Content-Type: application/json` on every request, bodyless ones included, so
 * an empty body is simply no body; a route that needs one answers 400-01 from the validation
 * pipe. A body over its route's limit is a 413-00; a charset other than UTF-8 or any
 * Content-Encoding is a 415-00 (Herald would otherwise read the bytes as something they are not).
 *
 * Bytes that are not UTF-8 are a 400-01 (decoding them would store U+FFFD in their place).
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
      const bytes = typeof body === 'string' ? Buffer.from(body) : body;
      let text: string;
      try {
        text = utf8.decode(bytes); // strips a leading BOM, as clients on .NET and PowerShell send one
      } catch {
        return done(new AppError('BODY_NOT_JSON', 'The request body is not valid UTF-8.'));
      }
      if (text.trim() === '') return done(null, undefined);
      // Before parsing: a hostile depth is refused without building it.
      if (nestingDepthExceeds(bytes, MAX_JSON_DEPTH)) {
        return done(new AppError('BODY_NOT_JSON', `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`));
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        return done(new AppError('BODY_NOT_JSON', `The request body is not valid JSON: ${(error as Error).message}`));
      }
      done(null, parsed);
    },
  );
}

/** Null when the body can be read as UTF-8 JSON as sent. */
export function describeUnsupportedEncoding(
  contentType: string | undefined,
  contentEncoding: string | string[] | undefined,
): string | null {
  const encodings = [contentEncoding ?? []].flat().flatMap((value) => value.split(','));
  const coded = encodings.map((value) => value.trim().toLowerCase()).filter((value) => value !== '' && value !== 'identity');
  if (coded.length > 0) return `Content-Encoding ${coded.join(', ')} is not supported; send the JSON body uncompressed.`;
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType ?? '')?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    return `charset=${charset} is not supported; send the JSON body as UTF-8.`;
  }
  return null;
}

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests objects and arrays deeper than `maxDepth`, read from its bytes:
 * brackets inside strings do not count. One pass, no allocation; malformed text is left to
 * JSON.parse to refuse.
 */
export function nestingDepthExceeds(json: Uint8Array, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const byte = json[i];
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      if (++depth > maxDepth) return true;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}
