import { absoluteTime, relativeTime } from '../lib/time';

/** A relative time ("3 min ago"); the absolute one, with its time zone, on hover (and as the element's description). */
export function Time({ iso, empty = '—' }: { iso: string | null | undefined; empty?: string }) {
  if (!iso) return <span className="muted">{empty}</span>;
  const absolute = absoluteTime(iso);
  return (
    <time dateTime={iso} title={absolute}>
      {relativeTime(iso)}
    </time>
  );
}
