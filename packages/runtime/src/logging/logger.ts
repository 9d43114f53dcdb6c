import { HeraldConfig } from '@herald/core';
import pino, { Logger } from 'pino';
import { HeraldService } from '../herald-service';

export interface HeraldLoggerOptions {
  /** Written on every line, so that lines from the api and the worker can be told apart wherever they are collected. */
  service: HeraldService;
  /**
   * Lines wait until this many bytes are pending and then go out in one write; 0 sends each line
   * as soon as the previous write has finished. Writes are asynchronous either way, so logging
   * never blocks the process on its stdout.
   */
  batchBytes: number;
}

/**
 * The process's one pino logger: structured JSON lines on stdout, each with its `service`. Nest's
 * messages reach it through NestPinoLogger. What is still pending when the process exits is
 * written synchronously then; a hard kill can lose it.
 */
export function createHeraldLogger(config: HeraldConfig, { service, batchBytes }: HeraldLoggerOptions): Logger {
  const destination = pino.destination({ dest: 1, sync: false, minLength: batchBytes });
  process.once('exit', () => destination.flushSync());
  return pino({ level: config.log.level, base: { service } }, destination);
}
