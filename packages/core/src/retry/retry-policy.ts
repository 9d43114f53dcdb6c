/**
 * The retry policy an application stores with its webhook, and the schedule it produces.
 * The stored policy *is* the schedule: no jitter, so what the preview shows is what happens.
 */

export const BACKOFF_TYPES = ['multiplier', 'linear', 'fixed'] as const;
export type BackoffType = (typeof BACKOFF_TYPES)[number];

export interface RetryPolicy {
  retryValue: number;
  maxRetries: number;
  backoffType: BackoffType;
  backoffValue: number;
}

/** No single wait is ever longer than a day, whatever the policy or a receiver's Retry-After. */
export const MAX_RETRY_DELAY_SECONDS = 86_400;

export const RETRY_LIMITS = {
  retryValue: { min: 1, max: MAX_RETRY_DELAY_SECONDS },
  maxRetries: { min: 0, max: 25 },
  backoffValue: {
    multiplier: { min: 1, max: 10 },
    linear: { min: 0, max: MAX_RETRY_DELAY_SECONDS },
    fixed: { min: 0, max: MAX_RETRY_DELAY_SECONDS },
  },
} as const satisfies {
  retryValue: { min: number; max: number };
  maxRetries: { min: number; max: number };
  backoffValue: Record<BackoffType, { min: number; max: number }>;
};

/** Stored when an application turns retries off without giving a policy. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  retryValue: 30,
  maxRetries: 5,
  backoffType: 'multiplier',
  backoffValue: 2,
});

/**
 * Seconds to wait before retry `retryNumber` (1-based: retry 1 follows the first attempt).
 * fixed: retry_value; linear: retry_value + (n-1)·backoff_value;
 * multiplier: retry_value · backoff_value^(n-1). Each capped at a day.
 */
export function delayBeforeRetry(policy: RetryPolicy, retryNumber: number): number {
  if (!Number.isInteger(retryNumber) || retryNumber < 1) {
    throw new RangeError(`retryNumber must be a positive integer, got ${retryNumber}`);
  }
  const steps = retryNumber - 1;
  let delay: number;
  switch (policy.backoffType) {
    case 'fixed':
      delay = policy.retryValue;
      break;
    case 'linear':
      delay = policy.retryValue + steps * policy.backoffValue;
      break;
    case 'multiplier':
      // backoff_value^steps overflows to Infinity for large steps; the cap absorbs it.
      delay = policy.retryValue * Math.pow(policy.backoffValue, steps);
      break;
  }
  return Math.min(delay, MAX_RETRY_DELAY_SECONDS);
}

/** Every wait the policy will make, in order; empty when retries are off. */
export function retrySchedule(policy: RetryPolicy, retryEnabled: boolean): number[] {
  if (!retryEnabled) return [];
  return Array.from({ length: policy.maxRetries }, (_, i) => delayBeforeRetry(policy, i + 1));
}

/**
 * A receiver that answers 429 or 503 with Retry-After may ask for a longer wait than the policy;
 * it gets it, up to the one-day cap. It can never shorten the policy's wait.
 */
export function honourRetryAfter(scheduledSeconds: number, retryAfterSeconds: number | null): number {
  if (retryAfterSeconds === null || !(retryAfterSeconds > scheduledSeconds)) return scheduledSeconds;
  return Math.min(retryAfterSeconds, MAX_RETRY_DELAY_SECONDS);
}
