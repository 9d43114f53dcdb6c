import {
  DEFAULT_RETRY_POLICY,
  delayBeforeRetry,
  honourRetryAfter,
  MAX_RETRY_DELAY_SECONDS,
  RetryPolicy,
  retrySchedule,
} from './retry-policy';

const policy = (backoffType: RetryPolicy['backoffType'], retryValue: number, backoffValue: number, maxRetries = 5): RetryPolicy => ({
  backoffType,
  retryValue,
  backoffValue,
  maxRetries,
});

describe('delayBeforeRetry (PRODUCT.md §3)', () => {
  it.each([
    // fixed: retry_value every time; backoff_value ignored
    [policy('fixed', 45, 999), [45, 45, 45, 45]],
    // linear: retry_value + (n-1)·backoff_value
    [policy('linear', 10, 15), [10, 25, 40, 55]],
    [policy('linear', 10, 0), [10, 10, 10, 10]],
    // multiplier: retry_value · backoff_value^(n-1)
    [policy('multiplier', 30, 2), [30, 60, 120, 240]],
    [policy('multiplier', 7, 1), [7, 7, 7, 7]],
    [policy('multiplier', 1, 10), [1, 10, 100, 1000]],
  ])('%j waits %j before retries 1..4', (p, expected) => {
    expect([1, 2, 3, 4].map((n) => delayBeforeRetry(p, n))).toEqual(expected);
  });

  it('caps every wait at a day, without overflowing to Infinity or NaN', () => {
    expect(delayBeforeRetry(policy('multiplier', 86_400, 10), 25)).toBe(MAX_RETRY_DELAY_SECONDS);
    expect(delayBeforeRetry(policy('multiplier', 3600, 10), 2)).toBe(36_000);
    expect(delayBeforeRetry(policy('multiplier', 3600, 10), 3)).toBe(86_400);
    expect(delayBeforeRetry(policy('linear', 86_400, 86_400), 25)).toBe(86_400);
    expect(delayBeforeRetry(policy('multiplier', 86_400, 10), 400)).toBe(86_400);
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses retry number %p', (n) => {
    expect(() => delayBeforeRetry(DEFAULT_RETRY_POLICY, n)).toThrow(RangeError);
  });
});

describe('retrySchedule', () => {
  it('lists max_retries waits, in order', () => {
    expect(retrySchedule(policy('multiplier', 30, 2, 5), true)).toEqual([30, 60, 120, 240, 480]);
    expect(retrySchedule(policy('multiplier', 30, 2, 0), true)).toEqual([]);
    expect(retrySchedule(policy('fixed', 1, 0, 25), true)).toHaveLength(25);
  });

  it('is empty when retries are off, whatever the policy', () => {
    expect(retrySchedule(policy('linear', 30, 2, 10), false)).toEqual([]);
  });

  it('uses the documented default when none was given', () => {
    expect(retrySchedule(DEFAULT_RETRY_POLICY, true)).toEqual([30, 60, 120, 240, 480]);
  });
});

describe('honourRetryAfter (429/503)', () => {
  it.each([
    [60, null, 60],
    [60, 30, 60], // never shortens the policy's wait
    [60, 60, 60],
    [60, 600, 600], // a longer request is honoured
    [60, 10 * 86_400, 86_400], // up to a day
  ])('scheduled %d s with Retry-After %p waits %d s', (scheduled, retryAfter, expected) => {
    expect(honourRetryAfter(scheduled, retryAfter)).toBe(expected);
  });
});
