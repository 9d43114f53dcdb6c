import { HeraldConfig } from '@herald/core';
import pino, { Logger } from 'pino';
import { HeraldService } from '../herald-service';
import { BatchedDestination } from './batched-destination';

/** How long a log line may wait for others to leave with it (BatchedDestination). */
export const LOG_GATHER_MS = 20;

export interface HeraldLoggerOptions {
  /** Written on every line, so that lines from the api and the worker can be told apart wherever they are collected. */
  service: HeraldService;
}

/**
 * The process's one pino logger: structured JSON lines on stdout, each with its `service`. Nest's
 * messages reach it through NestPinoLogger. The lines of up to LOG_GATHER_MS go out in one
 * asynchronous write (BatchedDestination), so logging never blocks the process on its stdout
 * and a busy api writes a few times a second rather than once a request; what is still pending
 * when the process exits is written synchronously then; a hard kill can lose it (at most
 * LOG_GATHER_MS of lines more than before the window).
 */
export function createHeraldLogger(config: HeraldConfig, { service }: HeraldLoggerOptions): Logger {
  let logger: Logger | undefined = undefined;
  const destination = new BatchedDestination(1, {
    gatherMs: LOG_GATHER_MS,
    onDropped: (lines) => logger?.warn({ droppedLines: lines }, `${lines} log lines were dropped: stdout did not keep up`),
  });
  process.once('exit', () => destination.flushSync());
  logger = pino({ level: config.log.level, base: { service } }, destination);
  return logger;
}
