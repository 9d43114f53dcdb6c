import { ApiError, oneLine, UnreachableError, UsageError } from '../cli-errors';

/** How long one call may take before the cli gives up on the api (exit 3). */
const ANSWER_TIMEOUT_MS = 30_000;

/** A successful answer: `data`, and for lists the cursor of the next page. */
export interface Answer<T = unknown> {
  data: T;
  next_cursor?: string | null;
}

type Query = Record<string, string | undefined>;

/**
 * The running api, as every other client sees it: the cli keeps no second copy of Herald's
 * rules, so whatever the api refuses is refused with the api's own code and message.
 */
export class HeraldApi {
  readonly base: URL;

  constructor(
    base: string,
    private readonly key: string,
  ) {
    try {
      this.base = new URL(base);
    } catch {
      throw new UsageError(`--url must be an absolute URL such as http://127.0.0.1:3000, got "${base}"`);
    }
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:') {
      throw new UsageError(`--url must be an http or https URL, got "${base}"`);
    }
  }

  get<T>(path: string, query: Query = {}): Promise<Answer<T>> {
    return this.call('GET', withQuery(path, query));
  }

  post<T>(path: string, body?: Record<string, unknown>): Promise<Answer<T>> {
    return this.call('POST', path, body);
  }

  delete<T>(path: string): Promise<Answer<T>> {
    return this.call('DELETE', path);
  }

  private async call<T>(method: string, path: string, body?: Record<string, unknown>): Promise<Answer<T>> {
    const url = new URL(path.replace(/^\//, ''), this.base.href.endsWith('/') ? this.base : `${this.base.href}/`);
    let status: number;
    let text: string;
    try {
      const response = await fetch(url, {
        method,
        headers: { authorization: this.key, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
        redirect: 'manual',
      });
      status = response.status;
      text = await response.text();
    } catch (error) {
      throw new UnreachableError(`cannot reach Herald at ${this.base.origin} (${reasonOf(error)}); is it running? (--url)`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (status >= 200 && status < 300 && isObject(parsed) && 'data' in parsed) return parsed as unknown as Answer<T>;
    const error = isObject(parsed) && isObject(parsed.error) ? parsed.error : null;
    if (error && typeof error.code === 'string' && typeof error.message === 'string') {
      throw new ApiError(error.code, oneLine(withDetails(error.message, error.details)));
    }
    throw new ApiError(String(status), `${this.base.origin} answered ${method} ${url.pathname} with something other than Herald's JSON`);
  }
}

function withQuery(path: string, query: Query): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, value);
  return search.size > 0 ? `${path}?${search}` : path;
}

/** The message, and the details that say more than it does (validation names each field). */
function withDetails(message: string, details: unknown): string {
  if (!Array.isArray(details)) return message;
  const extra = details
    .filter((detail): detail is { field: string; message: string } => isObject(detail) && typeof detail.message === 'string')
    .filter((detail) => !message.includes(detail.message))
    .map((detail) => (detail.field && !detail.message.startsWith(detail.field) ? `${detail.field}: ${detail.message}` : detail.message));
  return extra.length > 0 ? `${message} (${extra.join('; ')})` : message;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Why fetch failed, in a few words: undici hides the system error (ECONNREFUSED, ENOTFOUND) in `cause`. */
function reasonOf(error: unknown): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer within ${ANSWER_TIMEOUT_MS / 1000} s`;
  }
  const cause = error instanceof Error ? (error.cause ?? error) : error;
  if (cause instanceof AggregateError && cause.errors.length > 0) return reasonOf(cause.errors[0]);
  if (cause instanceof Error) return oneLine(cause.message || (cause as NodeJS.ErrnoException).code || cause.name);
  return String(cause);
}
