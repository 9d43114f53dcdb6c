import type { WebhookState } from '../delivery/delivery-status';

/** At least this many failed attempts in the period before a webhook is disabled (PRODUCT.md §10). */
export const AUTO_DISABLE_MIN_FAILURES = 10;

const HOUR_MS = 60 * 60 * 1000;

/**
 * When auto-disable will disable a failing webhook unless an attempt succeeds first
 * (PRODUCT.md §16): HERALD_DISABLE_AFTER_HOURS after its first failure since the last success.
 * The job checks once a minute and also needs AUTO_DISABLE_MIN_FAILURES failures by then, so this
 * is the earliest moment. Null when the webhook is not failing, is disabled already, or
 * auto-disable is off (0 hours).
 */
export function willDisableAt(health: { state: WebhookState; failingSince: Date | null }, disableAfterHours: number): Date | null {
  if (disableAfterHours === 0 || health.state !== 'active' || health.failingSince === null) return null;
  return new Date(health.failingSince.getTime() + disableAfterHours * HOUR_MS);
}

/** A failing streak that started at or before this time has used half its disable window: `webhook.failing` is due. */
export function failingWarningCutoff(now: Date, disableAfterHours: number): Date {
  return new Date(now.getTime() - (disableAfterHours * HOUR_MS) / 2);
}

/** A failing streak that started at or before this time has used its whole window: auto-disable is due. */
export function autoDisableCutoff(now: Date, disableAfterHours: number): Date {
  return new Date(now.getTime() - disableAfterHours * HOUR_MS);
}
