import { ERROR_CATALOGUE, ErrorCode, ErrorKind, statusOf } from './error-catalogue';

export interface ErrorDetail {
  /** Dotted path of the offending field, e.g. `retry_config.max_retries`. */
  field: string;
  message: string;
}

export interface AppErrorOptions {
  details?: ErrorDetail[];
  /** Response headers the error requires, e.g. Retry-After on 429 and 503. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The one error type Herald's code throws on purpose. It names a catalogue entry; the status
 * comes from the catalogue, never from the thrower. Framework-free so the worker, the cli and
 * the repositories can raise the same errors as the api.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;

  constructor(kind: ErrorKind, message?: string, options: AppErrorOptions = {}) {
    const entry = ERROR_CATALOGUE[kind];
    super(message ?? entry.message, { cause: options.cause });
    this.name = 'AppError';
    this.code = entry.code;
    this.status = statusOf(entry.code);
    this.details = options.details;
    this.headers = options.headers;
  }
}
