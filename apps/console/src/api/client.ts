import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from '../generated/api';
import { readSession } from './session';

export type Schemas = components['schemas'];
export type ErrorBody = Schemas['ErrorBodyDto'];
export type ErrorDetail = Schemas['ErrorDetailDto'];

/** An answer of `{ success: false, error }`, or a network failure (code null). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorBody['code'] | null,
    message: string,
    readonly details: ErrorDetail[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const auth: Middleware = {
  onRequest({ request }) {
    const session = readSession();
    if (session) request.headers.set('Authorization', session.credential);
    return request;
  },
};

// fetch looked up per call (not captured once), so component tests can stand in for the API.
export const api = createClient<paths>({ baseUrl: window.location.origin, fetch: (request) => globalThis.fetch(request) });
api.use(auth);

/** openapi-fetch's result, turned into the success body or a thrown ApiError. */
export async function call<T>(promise: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await promise;
  } catch (cause) {
    throw new ApiError(0, null, `The API could not be reached (${cause instanceof Error ? cause.message : String(cause)}).`);
  }
  if (result.response.ok && result.data !== undefined) return result.data;
  const body = result.error as Partial<Schemas['ErrorResponse']> | undefined;
  const error = body?.error;
  if (error) throw new ApiError(result.response.status, error.code, error.message, error.details ?? []);
  throw new ApiError(result.response.status, null, `The API answered ${result.response.status}.`);
}
