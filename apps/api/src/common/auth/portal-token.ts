import { hashApiKey } from '@herald/core';
import { randomBytes } from 'node:crypto';

export const PORTAL_TOKEN_PREFIX = 'hp_';
/** `hp_` + 43 url-safe base64 characters (32 random bytes), made as API keys are. */
export const PORTAL_TOKEN_PATTERN = /^hp_[A-Za-z0-9_-]{43}$/;

export interface IssuedPortalToken {
  /** Shown to the caller once, inside the link; never stored. */
  token: string;
  /** SHA-256, as API keys are stored: a 256-bit random value needs no salt. */
  hash: string;
}

export function issuePortalToken(random: (size: number) => Buffer = randomBytes): IssuedPortalToken {
  const token = PORTAL_TOKEN_PREFIX + random(32).toString('base64url');
  return { token, hash: hashApiKey(token) };
}

export function looksLikePortalToken(value: string): boolean {
  return PORTAL_TOKEN_PATTERN.test(value);
}
