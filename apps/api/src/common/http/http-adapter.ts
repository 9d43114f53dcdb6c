import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { IncomingMessage } from 'node:http';
import { largestBodyLimit } from './body-limits';
import { requestIdFor } from './request-id';

/** The Fastify adapter, configured the same way for the server and for the tests. */
export function createHttpAdapter(): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: largestBodyLimit(),
    requestIdHeader: false,
    genReqId: (request: IncomingMessage) => {
      const id = requestIdFor(request);
      // Kept on the raw request too, so the access log (pino-http) carries the same id.
      (request as IncomingMessage & { id: string }).id = id;
      return id;
    },
  });
}

/**
 * Options for NestFactory.create / createNestApplication. Nest's own JSON parser is off:
 * configureApp registers Herald's (json-body-parser.ts), which answers with directory codes.
 */
export const NEST_APP_OPTIONS = { bodyParser: false, bufferLogs: true } as const;
