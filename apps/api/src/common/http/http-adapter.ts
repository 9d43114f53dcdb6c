import { FastifyAdapter } from '@nestjs/platform-fastify';
import { LogController } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { largestBodyLimit } from './body-limits';
import { requestIdFor } from './request-id';

/** The Fastify adapter, configured the same way for the server and for the tests. */
export function createHttpAdapter(logger: Logger): FastifyAdapter {
  return new FastifyAdapter({
    loggerInstance: logger,
    // configureApp logs one line per request instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'requestId' }),
    bodyLimit: largestBodyLimit(),
    requestIdHeader: false,
    genReqId: (request: IncomingMessage) => requestIdFor(request),
  });
}

/**
 * Options for NestFactory.create / createNestApplication. Nest's own JSON parser is off:
 * configureApp registers Herald's (json-body-parser.ts), which answers with directory codes.
 */
export const NEST_APP_OPTIONS = { bodyParser: false, bufferLogs: true } as const;
