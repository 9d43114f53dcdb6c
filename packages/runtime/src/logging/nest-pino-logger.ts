import { LoggerService } from '@nestjs/common';
import type { Level, Logger } from 'pino';

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

  /**
   * Accepts Nest's (message, context) and pino's (object, message) call shapes. A Nest `Logger`
   * with a context appends it, so pino's shape arrives as (object, message, context).
   */
  private write(level: Level, message: unknown, rest: unknown[]): void {
    if (typeof message === 'object' && message !== null && !(message instanceof Error)) {
      const [text, context] = rest;
      this.logger[level](typeof context === 'string' ? { context, ...message } : message, typeof text === 'string' ? text : undefined);
      return;
    }
    const context = rest.find((value): value is string => typeof value === 'string');
    const err = message instanceof Error ? message : undefined;
    this.logger[level]({ ...(context ? { context } : {}), ...(err ? { err } : {}) }, err ? err.message : String(message));
  }
}
