import createClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './generated/api';

export type { components, operations, paths };
/** Every schema of the api's OpenAPI document, by name: `Schemas['WebhookDto']`, … */
export type Schemas = components['schemas'];
export type ErrorBody = Schemas['ErrorBodyDto'];
export type ErrorDetail = Schemas['ErrorDetailDto'];

/** A client for every route of the api, typed by path and method (openapi-fetch's `Client`). */
export type HeraldClient = Client<paths>;

export interface HeraldClientOptions {
  /** Where the api listens, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /**
   * Sent as `Authorization` with every request: an API key (`hk_…`), the admin key, or a customer
   * portal link's token (`hp_…`). A function is asked again at each request, for a caller whose
   * credential changes while the client lives (the console signs in and out); when it answers
   * nothing, the request goes without one.
   */
  apiKey?: string | (() => string | null | undefined);
  /**
   * Gives up on a request that has not been answered after this long (an AbortSignal timeout); a
   * `signal` the caller passes to a call still aborts it sooner.
   */
  timeoutMs?: number;
  /**
   * `follow` (fetch's default) or `manual`: Herald never redirects its api routes, so a redirect
   * means something else answered; `manual` hands that answer back instead of following it.
   */
  redirect?: RequestInit['redirect'];
  /** The fetch to use; the global one by default. Looked up per request, so tests can replace it. */
  fetch?: typeof globalThis.fetch;
}

/**
 * A typed client for Herald's api. Calls answer `{ data, error, response }` (openapi-fetch):
 * `data` is the success body, typed by route; `error` is Herald's error envelope. `unwrap` turns
 * that into the body or a thrown `HeraldApiError`.
 *
 *     const herald = createHeraldClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: process.env.HERALD_API_KEY });
 *     const webhook = await unwrap(herald.GET('/application/{application_id}/webhook', { params: { path: { application_id: 42 } } }));
 */
export function createHeraldClient(options: HeraldClientOptions): HeraldClient {
  const fetchOnce = (request: Request) => {
    const fetch = options.fetch ?? globalThis.fetch;
    return fetch(request, {
      // The caller's own signal (openapi-fetch puts it on the request) still counts beside the timeout.
      ...(options.timeoutMs !== undefined ? { signal: AbortSignal.any([request.signal, AbortSignal.timeout(options.timeoutMs)]) } : {}),
      ...(options.redirect ? { redirect: options.redirect } : {}),
    });
  };
  const { apiKey } = options;
  const client = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: typeof apiKey === 'string' && apiKey ? { authorization: apiKey } : undefined,
    fetch: fetchOnce,
  });
  if (typeof apiKey === 'function') {
    client.use({
      onRequest({ request }) {
        const key = apiKey();
        if (key) request.headers.set('authorization', key);
        return request;
      },
    });
  }
  return client;
}

/** The api answered with an error: Herald's envelope (`code` set) or, from something else, a status alone (`code` null). */
export class HeraldApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorBody['code'] | null,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
    this.name = 'HeraldApiError';
  }
}

/** What every call of a HeraldClient resolves to. */
export interface CallResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The success body of a call, or a thrown `HeraldApiError`: with Herald's code, message and
 * details when the api answered with its error envelope, with `code` null when the answer was
 * not Herald's (a proxy's page, say). A request that got no answer at all (refused, timed out)
 * rejects with fetch's own error, as it does without `unwrap`.
 */
export async function unwrap<T>(call: Promise<CallResult<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok && data !== undefined) return data;
  const body = isRecord(error) && isRecord(error.error) ? error.error : null;
  if (body && typeof body.code === 'string' && typeof body.message === 'string') {
    const details = Array.isArray(body.details) ? (body.details as ErrorDetail[]) : [];
    throw new HeraldApiError(response.status, body.code as ErrorBody['code'], body.message, details);
  }
  throw new HeraldApiError(
    response.status,
    null,
    `${new URL(response.url || 'http://herald.invalid').origin} answered ${response.status} with something other than Herald's JSON`,
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
