// The preview uses the very function the worker schedules retries with (packages/core): it has
// no imports, so the browser bundle takes it as it is and the two can never disagree.
import { RETRY_LIMITS, retrySchedule, type BackoffType } from '@herald/core/src/retry/retry-policy';

export { RETRY_LIMITS };

export interface RetryFields {
  retry_enabled: boolean;
  retry_value: number;
  max_retries: number;
  backoff_type: BackoffType;
  backoff_value: number;
}

/** The waits before each retry, or null while a field holds something the API would refuse. */
export function previewSchedule(fields: RetryFields): number[] | null {
  const { retry_value, max_retries, backoff_value, backoff_type } = fields;
  if (!fields.retry_enabled) return [];
  const whole = [retry_value, max_retries, backoff_value].every((n) => Number.isInteger(n));
  if (!whole) return null;
  if (retry_value < RETRY_LIMITS.retryValue.min || retry_value > RETRY_LIMITS.retryValue.max) return null;
  if (max_retries < RETRY_LIMITS.maxRetries.min || max_retries > RETRY_LIMITS.maxRetries.max) return null;
  const backoff = RETRY_LIMITS.backoffValue[backoff_type];
  if (backoff_value < backoff.min || backoff_value > backoff.max) return null;
  return retrySchedule({ retryValue: retry_value, maxRetries: max_retries, backoffType: backoff_type, backoffValue: backoff_value }, true);
}

/** 90 → "1 min 30 s", 86400 → "1 d". */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const parts: string[] = [];
  const units: [number, string][] = [
    [86_400, 'd'],
    [3600, 'h'],
    [60, 'min'],
    [1, 's'],
  ];
  let rest = seconds;
  for (const [size, unit] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n} ${unit}`);
    rest -= n * size;
  }
  return parts.slice(0, 2).join(' ');
}
