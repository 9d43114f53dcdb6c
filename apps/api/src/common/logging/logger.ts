import { HeraldConfig } from '@herald/core';
import { createHeraldLogger } from '@herald/runtime';
import type { Logger } from 'pino';

/**
 * The api's logger: Fastify logs each request through it (with the request id bound), and Nest's
 * own messages go through NestPinoLogger. The request's headers and body are never logged, so
 * keys and customers' header values cannot leak.
 */
export function createLogger(config: HeraldConfig): Logger {
  return createHeraldLogger(config, { service: 'herald-api' });
}
