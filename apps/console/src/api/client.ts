import { createHeraldClient, HeraldApiError, unwrap, type CallResult } from '@herald/client';
import { readSession } from './session';

/**
 * The console's one client of the api, @herald/client (the cli's too): same origin as the page,
 * and the session's key or portal token, read at each request since signing in and out change it.
 * fetch is looked up per request, so component tests can stand in for the API.
 */
export const api = createHeraldClient({ baseUrl: window.location.origin, apiKey: () => readSession()?.credential });

/**
 * A call's success body, or a thrown HeraldApiError: the api's own code, message and details,
 * or — when no answer came at all — status 0 without a code, so every screen shows one kind of
 * error, in words.
 */
export async function call<T>(request: Promise<CallResult<T>>): Promise<T> {
  try {
    return await unwrap(request);
  } catch (error) {
    if (error instanceof HeraldApiError) throw error;
    throw new HeraldApiError(0, null, `The API could not be reached (${error instanceof Error ? error.message : String(error)}).`);
  }
}
