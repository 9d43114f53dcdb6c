import { HeraldConfig } from '@herald/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';

const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Structured JSON logs, one line per request with its request id. Keys never reach the logs:
 * the Authorization header is redacted, and bodies (which hold customer header values) are not
 * logged at all.
 */
export function loggerOptions(config: HeraldConfig): Params {
  return {
    pinoHttp: {
      level: config.log.level,
      // Fastify's genReqId stores the id on the raw request (see http-adapter.ts); reuse it.
      genReqId: (request: IncomingMessage) => (request as IncomingMessage & { id: string }).id,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
      autoLogging: { ignore: (request: IncomingMessage) => QUIET_PATHS.has((request.url ?? '').split('?')[0]) },
      customLogLevel: (_request: IncomingMessage, response: ServerResponse, error?: Error) =>
        error || response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'info',
      serializers: {
        req: (request: { id: string; method: string; url: string }) => ({ id: request.id, method: request.method, url: request.url }),
        res: (response: { statusCode: number }) => ({ statusCode: response.statusCode }),
      },
    },
  };
}
