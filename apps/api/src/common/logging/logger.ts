import { HeraldConfig } from '@herald/core';
import { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

/**
 * One pino logger for the process: Fastify logs each request through it (with the request id
 * bound), and Nest's own messages go through NestPinoLogger. Structured JSON lines; the
 * request's headers and body are never logged, so keys and customers' header values cannot leak.
 *
 * Lines are written asynchronously in 4 KiB batches: a synchronous write per request cost a
 * third of the api's throughput (bench/). The buffer is flushed when the process exits; a
 * hard kill can lose the last few lines.
 */
export function createLogger(config: HeraldConfig): Logger {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  process.once('exit', () => destination.flushSync());
  return pino({ level: config.log.level, base: { service: 'herald-api' } }, destination);
}

/** Nest's LoggerService on top of the process's pino logger. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  /** Accepts Nest's (message, context) and pino's (object, message) call shapes. */
  private write(level: pino.Level, message: unknown, rest: unknown[]): void {
    if (typeof message === 'object' && message !== null && !(message instanceof Error)) {
      this.logger[level](message, typeof rest[0] === 'string' ? rest[0] : undefined);
      return;
    }
    const context = rest.find((value): value is string => typeof value === 'string');
    const err = message instanceof Error ? message : undefined;
    this.logger[level]({ ...(context ? { context } : {}), ...(err ? { err } : {}) }, err ? err.message : String(message));
  }
}
