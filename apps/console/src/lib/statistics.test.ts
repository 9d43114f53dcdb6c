import { describe, expect, it } from 'vitest';
import { isStatisticsRange, niceScale, reasonWords, statisticsQuery, totalsOf, type StatisticsBucket } from './statistics';

const bucket = (start: string, counts: Partial<StatisticsBucket> = {}): StatisticsBucket => ({
  start,
  events: 0,
  succeeded: 0,
  failed: 0,
  attempts: 0,
  failed_attempts: 0,
  latency_ms: { p50: null, p95: null },
  errors: {},
  ...counts,
});

describe('the Statistics tab’s arithmetic', () => {
  it('asks for exactly the range’s buckets: since at the start of a UTC hour or day, the last bucket the one in progress', () => {
    const now = Date.parse('2026-11-25T14:37:12Z');
    expect(statisticsQuery('24h', now)).toEqual({ since: '2026-11-24T15:00:00.000Z', granularity: 'hour' });
    expect(statisticsQuery('7d', now)).toEqual({ since: '2026-11-18T15:00:00.000Z', granularity: 'hour' });
    expect(statisticsQuery('30d', now)).toEqual({ since: '2026-10-27T00:00:00.000Z', granularity: 'day' });
    // 89 whole days and today: within the api's 90 days.
    expect(statisticsQuery('90d', now)).toEqual({ since: '2026-08-28T00:00:00.000Z', granularity: 'day' });
    expect(isStatisticsRange('7d')).toBe(true);
    expect(isStatisticsRange('toString')).toBe(false);
    expect(isStatisticsRange(null)).toBe(false);
  });

  it('totals a range: counts, the success rate of deliveries that ended, reasons by frequency, the slowest p95', () => {
    const totals = totalsOf([
      bucket('2026-11-25T13:00:00Z', {
        events: 5,
        succeeded: 4,
        failed: 1,
        attempts: 6,
        failed_attempts: 2,
        latency_ms: { p50: 40, p95: 300 },
        errors: { '5xx': 2 },
      }),
      bucket('2026-11-25T14:00:00Z'),
      bucket('2026-11-25T15:00:00Z', {
        succeeded: 3,
        attempts: 4,
        failed_attempts: 1,
        latency_ms: { p50: 50, p95: 120 },
        errors: { timeout: 1, '5xx': 1 },
      }),
    ]);
    expect(totals).toEqual({
      events: 5,
      succeeded: 7,
      failed: 1,
      attempts: 10,
      failedAttempts: 3,
      successRate: 7 / 8,
      errors: [
        ['5xx', 3],
        ['timeout', 1],
      ],
      slowest: { p95: 300, start: '2026-11-25T13:00:00Z' },
    });
    expect(totalsOf([bucket('2026-11-25T13:00:00Z')])).toMatchObject({ successRate: null, slowest: null, errors: [] });
  });

  it('makes axes of round steps that reach the highest value', () => {
    expect(niceScale(0)).toEqual({ top: 1, ticks: [0, 1] });
    expect(niceScale(3)).toEqual({ top: 3, ticks: [0, 1, 2, 3] });
    expect(niceScale(1_234)).toEqual({ top: 1_500, ticks: [0, 500, 1_000, 1_500] });
    expect(niceScale(87)).toEqual({ top: 100, ticks: [0, 50, 100] });
    for (const max of [1, 7, 19, 250, 9_999, 123_456]) {
      const { top, ticks } = niceScale(max);
      expect(top).toBeGreaterThanOrEqual(max);
      expect(ticks[ticks.length - 1]).toBe(top);
      expect(ticks.length).toBeLessThanOrEqual(6);
    }
  });

  it('words the reasons, and leaves a kind it does not know as it came', () => {
    expect(reasonWords('5xx')).toBe('Server error (5xx)');
    expect(reasonWords('connection_refused')).toBe('Connection refused');
    expect(reasonWords('constructor')).toBe('constructor');
  });
});
