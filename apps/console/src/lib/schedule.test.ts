import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { formatDuration, previewSchedule, type RetryFields } from './schedule';

// The worker's own build of the policy (CommonJS, what the api and worker run).
const core = createRequire(import.meta.url)('@herald/core') as typeof import('@herald/core/src/retry/retry-policy');

const fields = (over: Partial<RetryFields> = {}): RetryFields => ({
  retry_enabled: true,
  retry_value: 30,
  max_retries: 5,
  backoff_type: 'multiplier',
  backoff_value: 2,
  ...over,
});

describe('previewSchedule', () => {
  it('shows the README example: 30 s doubling, five retries', () => {
    expect(previewSchedule(fields())).toEqual([30, 60, 120, 240, 480]);
  });

  it.each([
    [fields({ backoff_type: 'fixed', retry_value: 45, backoff_value: 999, max_retries: 3 }), [45, 45, 45]],
    [fields({ backoff_type: 'linear', retry_value: 10, backoff_value: 15, max_retries: 4 }), [10, 25, 40, 55]],
    [fields({ backoff_type: 'multiplier', retry_value: 3600, backoff_value: 10, max_retries: 3 }), [3600, 36_000, 86_400]],
  ])('%j → %j (PRODUCT.md §3, capped at a day)', (input, expected) => {
    expect(previewSchedule(input)).toEqual(expected);
  });

  it('is empty when retries are off', () => {
    expect(previewSchedule(fields({ retry_enabled: false }))).toEqual([]);
  });

  it.each([
    fields({ retry_value: 0 }),
    fields({ retry_value: 86_401 }),
    fields({ retry_value: Number.NaN }),
    fields({ max_retries: 26 }),
    fields({ max_retries: 1.5 }),
    fields({ backoff_type: 'multiplier', backoff_value: 0 }),
    fields({ backoff_type: 'multiplier', backoff_value: 11 }),
    fields({ backoff_type: 'linear', backoff_value: -1 }),
  ])('shows no schedule for a value the API refuses: %j', (input) => {
    expect(previewSchedule(input)).toBeNull();
  });

  it("agrees with the worker's retrySchedule for every valid policy of a sweep", () => {
    for (const backoff_type of ['multiplier', 'linear', 'fixed'] as const) {
      for (const retry_value of [1, 7, 30, 3600, 86_400]) {
        for (const backoff_value of backoff_type === 'multiplier' ? [1, 2, 10] : [0, 15, 86_400]) {
          for (const max_retries of [0, 1, 5, 25]) {
            const expected = core.retrySchedule(
              { retryValue: retry_value, maxRetries: max_retries, backoffType: backoff_type, backoffValue: backoff_value },
              true,
            );
            expect(previewSchedule(fields({ backoff_type, retry_value, backoff_value, max_retries }))).toEqual(expected);
          }
        }
      }
    }
  });
});

describe('formatDuration', () => {
  it.each([
    [30, '30 s'],
    [90, '1 min 30 s'],
    [3600, '1 h'],
    [86_400, '1 d'],
    [90_061, '1 d 1 h'],
  ])('%d s reads %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });
});
