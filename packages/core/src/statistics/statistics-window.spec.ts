import { GRANULARITY_MS, statisticsWindow } from './statistics-window';

const { hour: HOUR_MS, day: DAY_MS } = GRANULARITY_MS;

const at = (iso: string) => new Date(iso);
const NOW = at('2026-11-25T14:37:12.345Z');

describe('statisticsWindow: the buckets of GET /application/{id}/stats (PRODUCT.md §16)', () => {
  it('defaults to the last 24 hours by hour: every hour overlapping them, whole', () => {
    const result = statisticsWindow({}, NOW);
    if (!result.ok) throw new Error(result.message);
    expect(result.window.granularity).toBe('hour');
    expect(result.window.from).toEqual(at('2026-11-24T14:00:00.000Z'));
    expect(result.window.to).toEqual(at('2026-11-25T15:00:00.000Z'));
    expect(result.window.bucketStarts).toHaveLength(25);
    expect(result.window.bucketStarts[24]).toEqual(at('2026-11-25T14:00:00.000Z'));
  });

  it('lists exactly 24 buckets for 24 hours on the hour, and UTC days by day', () => {
    const hours = statisticsWindow({ since: at('2026-11-24T15:00:00Z'), until: at('2026-11-25T15:00:00Z') }, NOW);
    expect(hours.ok && hours.window.bucketStarts.length).toBe(24);
    const days = statisticsWindow({ since: at('2026-11-01T10:00:00+05:30'), until: NOW, granularity: 'day' }, NOW);
    if (!days.ok) throw new Error(days.message);
    expect(days.window.from).toEqual(at('2026-11-01T00:00:00.000Z'));
    expect(days.window.to).toEqual(at('2026-11-26T00:00:00.000Z'));
    expect(days.window.bucketStarts.map((d) => d.getTime() % DAY_MS)).toEqual(Array(25).fill(0));
  });

  it('allows 90 days by hour on the hour (2,160 buckets) and by day', () => {
    const until = at('2026-11-25T00:00:00Z');
    const since = new Date(until.getTime() - 90 * DAY_MS);
    const hours = statisticsWindow({ since, until, granularity: 'hour' }, NOW);
    expect(hours.ok && hours.window.bucketStarts.length).toBe(2_160);
    const days = statisticsWindow({ since: new Date(since.getTime() + 1), until: new Date(until.getTime() + 1), granularity: 'day' }, NOW);
    expect(days.ok && days.window.bucketStarts.length).toBe(91);
  });

  it('names the parameter that is wrong', () => {
    expect(statisticsWindow({ since: NOW, until: NOW }, NOW)).toMatchObject({ ok: false, parameter: 'until' });
    expect(statisticsWindow({ since: new Date(NOW.getTime() + HOUR_MS) }, NOW)).toMatchObject({
      ok: false,
      parameter: 'since',
      message: expect.stringContaining('which is now'),
    });
    expect(statisticsWindow({ since: new Date(NOW.getTime() - 91 * DAY_MS) }, NOW)).toMatchObject({
      ok: false,
      parameter: 'since',
      message: 'since and until may be at most 90 days apart; these are 91 days apart.',
    });
    // 90 days not on the hour touch 2,161 hours.
    expect(statisticsWindow({ since: new Date(NOW.getTime() - 90 * DAY_MS) }, NOW)).toMatchObject({
      ok: false,
      parameter: 'granularity',
      message: expect.stringContaining('2161 buckets, at most 2160'),
    });
  });
});
