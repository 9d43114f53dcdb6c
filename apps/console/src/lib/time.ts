/**
 * Times as a person scans them in a log: relative ("3 min ago", "in 20 s"), with the absolute
 * time and its zone for the hover (PRODUCT.md §12; issue 26 #12: "to the second with no time
 * zone" was hard to read and ambiguous across teams).
 */
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

export function relativeTime(iso: string, now: number = Date.now(), locale?: string): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (Math.abs(seconds) < 5) return 'just now';
  const format = new Intl.RelativeTimeFormat(locale, { numeric: 'auto', style: 'short' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') return format.format(Math.trunc(seconds / size), unit);
  }
  return format.format(seconds, 'second');
}

/** The full date and time with the time zone's name, e.g. "25 Nov 2026, 14:03:07 UTC". */
export function absoluteTime(iso: string, locale?: string): string {
  return new Date(iso).toLocaleString(locale, { dateStyle: 'medium', timeStyle: 'long' });
}

/**
 * A `<input type="datetime-local">` value (local wall time, no zone) as an ISO instant, or
 * undefined when empty or not a date.
 */
export function localInputToIso(value: string): string | undefined {
  if (!value) return undefined;
  const time = new Date(value).getTime();
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}
