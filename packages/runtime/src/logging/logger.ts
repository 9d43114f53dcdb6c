import { HeraldConfig } from '@herald/core';
import pino, { Logger } from 'pino';
import { HeraldService } from '../herald-service';
import { TurnBatchedDestination } from './turn-batched-destination';

export interface HeraldLoggerOptions {
  /** Written on every line, so that lines from the api and the worker can be told apart wherever they are collected. */
  service: HeraldService;
}

/**
 * The process's one pino logger: structured JSON lines on stdout, each with its `service`. Nest's
 * messages reach it through NestPinoLogger. The lines of one event-loop turn go out in one
 * asynchronous write (TurnBatchedDestination), so logging never blocks the process on its
 * stdout; what is still pending when the process exits is written synchronously then; a hard
 * kill can lose it.
 */
export function createHeraldLogger(config: HeraldConfig, { service }: HeraldLoggerOptions): Logger {
  let logger: Logger | undefined = undefined;
  const destination = new TurnBatchedDestination(1, {
    onDropped: (lines) => logger?.warn({ droppedLines: lines }, `${lines} log lines were dropped: stdout did not keep up`),
  });
  process.once('exit', () => destination.flushSync());
  logger = pino({ level: config.log.level, base: { service } }, destination);
  return logger;
}
