import { randomPool } from '../random/random-pool';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** After a rotation the previous secret keeps signing this long, so receivers can switch over. */
export const ROTATED_SECRET_GRACE_SECONDS = 24 * 60 * 60;

/** Standard Webhooks symmetric secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(random: (size: number) => Buffer = (size) => randomPool.bytes(size)): string {
  return WEBHOOK_SECRET_PREFIX + random(32).toString('base64');
}
