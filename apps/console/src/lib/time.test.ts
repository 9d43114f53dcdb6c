import { describe, expect, it } from 'vitest';
import { absoluteTime, localInputToIso, relativeTime } from './time';

describe('times as the log shows them', () => {
  const now = Date.parse('2026-11-25T12:00:00Z');
  it('says how long ago or until, in the largest unit that fits', () => {
    expect(relativeTime('2026-11-25T12:00:02Z', now, 'en')).toBe('just now');
    expect(relativeTime('2026-11-25T11:59:30Z', now, 'en')).toBe('30 sec. ago');
    expect(relativeTime('2026-11-25T11:57:00Z', now, 'en')).toBe('3 min. ago');
    expect(relativeTime('2026-11-25T12:20:00Z', now, 'en')).toBe('in 20 min.');
    expect(relativeTime('2026-11-25T09:00:00Z', now, 'en')).toBe('3 hr. ago');
    expect(relativeTime('2026-11-23T12:00:00Z', now, 'en')).toBe('2 days ago');
  });
  it('gives the absolute time with its zone', () => {
    expect(absoluteTime('2026-11-25T12:00:00Z', 'en-GB')).toMatch(/25 Nov 2026.*12:00:00 (UTC|GMT|[A-Z]{3,4}|GMT[+-]\d+)/);
  });
  it('turns a datetime-local value into an instant, and empty into nothing', () => {
    expect(localInputToIso('')).toBeUndefined();
    expect(localInputToIso('not a date')).toBeUndefined();
    expect(localInputToIso('2026-11-25T12:00')).toBe(new Date('2026-11-25T12:00').toISOString());
  });
});
