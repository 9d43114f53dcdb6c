import { createHmac, createSecretKey, KeyObject } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '../credentials/webhook-secrets';

/**
 * Secrets' HMAC keys, imported once each. Given a Buffer, createHmac imports the key on every
 * call: on Node 24 that costs about 28 µs, ten times the HMAC of a webhook (2.9 µs with a
 * KeyObject); it was 7% of the worker's CPU (bench/README.md, issue 21). Cleared when full, so
 * rotated-out secrets cannot pile up.
 */
const keys = new Map<string, KeyObject>();
const MAX_CACHED_KEYS = 10_000;

function hmacKey(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= MAX_CACHED_KEYS) keys.clear();
    key = createSecretKey(
      Buffer.from(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret, 'base64'),
    );
    keys.set(secret, key);
  }
  return key;
}

/**
 * The Standard Webhooks `webhook-signature` header: `v1,<base64 HMAC-SHA256>` of
 * "<webhook-id>.<webhook-timestamp>.<body>" with each secret still valid, space-separated, so
 * a receiver that knows either secret verifies during a rotation. node:crypto, not the
 * standardwebhooks package: the same bytes, about five times faster (research, ecosystem §1).
 */
export function signatureHeader(secrets: readonly string[], messageId: string, timestampSeconds: number, body: string): string {
  const signed = `${messageId}.${timestampSeconds}.${body}`;
  return secrets.map((secret) => `v1,${createHmac('sha256', hmacKey(secret)).update(signed).digest('base64')}`).join(' ');
}
