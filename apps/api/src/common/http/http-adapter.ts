import { FastifyAdapter } from '@nestjs/platform-fastify';
import { LogController } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { largestBodyLimit } from './body-limits';
import { answerClientError, answerFrameworkError, MAX_PATH_PARAMETER_LENGTH } from './protocol-errors';
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
    routerOptions: { maxParamLength: MAX_PATH_PARAMETER_LENGTH },
    // Node's missing-Host answer has no body; configureApp checks Host and answers 400-00.
    http: { requireHostHeader: false },
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
  });
}

/**
 * Options for NestFactory.create / createNestApplication. Nest's own JSON parser is off:
 * configureApp registers Herald's (json-body-parser.ts), which answers with directory codes.
 */
export const NEST_APP_OPTIONS = { bodyParser: false, bufferLogs: true } as const;
