import { type CallResult, createHeraldClient, type HeraldClient } from '@herald/client';
import { ApiError, oneLine, UnreachableError, UsageError } from '../cli-errors';

/** How long one call may take before the cli gives up on the api (exit 3). */
const ANSWER_TIMEOUT_MS = 30_000;

/**
 * What the printers read from a successful answer: `data`, and for lists the cursor of the next
 * page. Each route's own type comes from @herald/client; this is only the part they share.
 */
export interface Answer<T = unknown> {
  data: T;
  next_cursor?: string | null;
}

/**
 * The running api, as every other client sees it: the cli calls it through @herald/client, whose
 * types are generated from the api's OpenAPI document, and keeps no second copy of Herald's
 * rules, so whatever the api refuses is refused with the api's own code and message.
 */
export class HeraldApi {
  readonly base: URL;
  private readonly client: HeraldClient;

  constructor(base: string, key: string) {
    try {
      this.base = new URL(base);
    } catch {
      throw new UsageError(`--url must be an absolute URL such as http://127.0.0.1:3000, got "${base}"`);
    }
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:') {
      throw new UsageError(`--url must be an http or https URL, got "${base}"`);
    }
    this.client = createHeraldClient({
      baseUrl: this.base.href,
      apiKey: key,
      timeoutMs: ANSWER_TIMEOUT_MS,
      redirect: 'manual',
      fetch: (request, init) => this.fetchHeraldAnswer(request as Request, init),
    });
  }

  /**
   * One call of the typed client, e.g. `api.call((herald) => herald.GET('/admin/accounts'))`:
   * its success body, or the api's error as an ApiError (exit 1). No answer at all is an
   * UnreachableError (exit 3).
   */
  async call<T extends Answer>(send: (client: HeraldClient) => Promise<CallResult<T>>): Promise<T> {
    const { data, error, response } = await send(this.client);
    if (response.ok && data !== undefined) return data;
    // fetchHeraldAnswer let only Herald's error envelope through as an error.
    const { code, message, details } = (error as { error: { code: string; message: string; details?: unknown } }).error;
    throw new ApiError(code, oneLine(withDetails(message, details)));
  }

  /**
   * fetch, for the client: an answer that is not Herald's JSON (a success without `data`, an error
   * without the envelope: a proxy's page, say) ends the command here, naming the request; so does
   * no answer at all. What reaches openapi-fetch is always Herald's JSON.
   */
  private async fetchHeraldAnswer(request: Request, init?: RequestInit): Promise<Response> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(request, init);
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
    const success = response.status >= 200 && response.status < 300;
    const herald = success ? isObject(parsed) && 'data' in parsed : isHeraldError(parsed);
    if (!herald) {
      throw new ApiError(
        String(response.status),
        `${this.base.origin} answered ${request.method} ${new URL(request.url).pathname} with something other than Herald's JSON`,
      );
    }
    // The body was read above: openapi-fetch gets the same answer again, to parse and type.
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
}

function isHeraldError(parsed: unknown): boolean {
  const error = isObject(parsed) && isObject(parsed.error) ? parsed.error : null;
  return !!error && typeof error.code === 'string' && typeof error.message === 'string';
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
