import type { ApiKeyScope } from '@herald/database';

/** Who is calling: the API key that authenticated the request. */
export interface Principal {
  keyId: string;
  scope: ApiKeyScope;
  /** null for admin keys, which act on every account. */
  accountId: string | null;
}
