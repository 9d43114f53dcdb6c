import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { useSearchParams } from 'react-router';
import { api, call } from '../api/client';
import { ErrorMessage } from '../components/ErrorMessage';
import {
  bucketLabel,
  formatCount,
  formatMs,
  isStatisticsRange,
  niceScale,
  reasonWords,
  STATISTICS_RANGES,
  statisticsQuery,
  totalsOf,
  type Granularity,
  type StatisticsBucket,
  type StatisticsRange,
} from '../lib/statistics';
import { useApplicationId } from './ApplicationLayout';

/** New deliveries show up without a reload; statistics change by the hour, so a slow poll is enough. */
const POLL_MS = 30_000;

/**
 * An application's delivery statistics (PRODUCT.md §16), in the console and the portal alike:
 * outcomes per bucket as stacked bars, the latency line (p50 and p95), totals, the reasons for
 * failed attempts and the outcomes by event type, over a range the reader picks. Drawn as plain
 * SVG (apps/console/README.md says why no chart library).
 */
export function StatisticsPage() {
  const id = useApplicationId();
  const [params, setParams] = useSearchParams();
  const asked = params.get('range');
  const range: StatisticsRange = isStatisticsRange(asked) ? asked : '24h';
  const { granularity, words } = STATISTICS_RANGES[range];
  const statistics = useQuery({
    queryKey: ['statistics', id, range],
    // The range goes with its answer: while the next range loads, the previous one is drawn as what it is.
    queryFn: async () => ({
      range,
      ...(await call(
        api.GET('/application/{application_id}/stats', { params: { path: { application_id: id }, query: statisticsQuery(range) } }),
      )),
    }),
    refetchInterval: POLL_MS,
    // The previous range stays drawn while the next one loads: no flash of an empty card.
    placeholderData: keepPreviousData,
  });
  const data = statistics.data?.data;
  const totals = data ? totalsOf(data.buckets) : null;
  const shownGranularity: Granularity = statistics.data ? STATISTICS_RANGES[statistics.data.range].granularity : granularity;
  return (
    <section className="card statistics" aria-labelledby="statistics-heading" aria-busy={statistics.isFetching}>
      <div className="section-head">
        <h2 id="statistics-heading">Statistics</h2>
        <div className="range-selector" role="group" aria-label="Range">
          {(Object.keys(STATISTICS_RANGES) as StatisticsRange[]).map((key) => (
            <button
              key={key}
              type="button"
              aria-pressed={key === range}
              title={STATISTICS_RANGES[key].words}
              onClick={() => setParams(key === '24h' ? {} : { range: key }, { replace: true })}
            >
              {STATISTICS_RANGES[key].label}
            </button>
          ))}
        </div>
      </div>
      <p className="muted">
        Deliveries to this application's webhook over {words}, by {granularity === 'hour' ? 'hour' : 'UTC day'}: each delivery counts once,
        when it succeeds or fails for good; every attempt, retries included, counts in attempts and latency.
      </p>
      <ErrorMessage error={statistics.error} />
      {statistics.isPending && (
        <p className="loading" role="status">
          Loading the statistics…
        </p>
      )}
      {data && totals && (
        <>
          <Totals totals={totals} />
          {totals.attempts === 0 ? (
            <p className="muted empty">Nothing was delivered in {words}.</p>
          ) : (
            <>
              <Chart
                title="Outcomes"
                legend={[
                  ['succeeded', 'Succeeded'],
                  ['failed', 'Failed for good'],
                ]}
              >
                {(width) => <OutcomeBars buckets={data.buckets} granularity={shownGranularity} width={width} />}
              </Chart>
              <Chart
                title="Latency of successful attempts"
                legend={[
                  ['p50', 'p50 (median)'],
                  ['p95', 'p95'],
                ]}
              >
                {(width) => <LatencyLines buckets={data.buckets} granularity={shownGranularity} width={width} />}
              </Chart>
              <div className="statistics-details">
                <Reasons errors={totals.errors} />
                <ByEvent byEvent={data.by_event} />
              </div>
            </>
          )}
          <details className="statistics-table">
            <summary>Every {granularity === 'hour' ? 'hour' : 'day'} as numbers</summary>
            <BucketTable buckets={data.buckets} granularity={shownGranularity} />
          </details>
        </>
      )}
    </section>
  );
}

function Totals({ totals }: { totals: ReturnType<typeof totalsOf> }) {
  const rate = totals.successRate === null ? '–' : `${(Math.floor(totals.successRate * 1000) / 10).toFixed(1)}%`;
  return (
    <dl className="statistics-totals">
      <Tile term="Events sent" value={formatCount(totals.events)} />
      <Tile term="Succeeded" value={formatCount(totals.succeeded)} tone="ok" />
      <Tile term="Failed" value={formatCount(totals.failed)} tone={totals.failed > 0 ? 'fail' : undefined} />
      <Tile term="Success rate" value={rate} />
      <Tile term="Attempts" value={formatCount(totals.attempts)} note={`${formatCount(totals.failedAttempts)} failed`} />
      <Tile term="Slowest p95" value={formatMs(totals.slowest?.p95 ?? null)} />
    </dl>
  );
}

function Tile({ term, value, note, tone }: { term: string; value: string; note?: string; tone?: 'ok' | 'fail' }) {
  return (
    <div className={tone ? `tile tile-${tone}` : 'tile'}>
      <dt>{term}</dt>
      <dd>
        {value}
        {note && <span className="tile-note">{note}</span>}
      </dd>
    </div>
  );
}

/** A chart's frame: its title, a legend, and a drawing as wide as the card (measured, so text keeps its size at 390 px). */
function Chart({ title, legend, children }: { title: string; legend: [string, string][]; children: (width: number) => ReactNode }) {
  const frame = useRef<HTMLDivElement>(null);
  const width = useWidth(frame);
  return (
    <figure className="chart">
      <figcaption>
        <h3>{title}</h3>
        <ul className="legend">
          {legend.map(([series, words]) => (
            <li key={series}>
              <span className={`swatch swatch-${series}`} aria-hidden="true" />
              {words}
            </li>
          ))}
        </ul>
      </figcaption>
      <div ref={frame} className="chart-frame">
        {width > 0 && children(width)}
      </div>
    </figure>
  );
}

/** The element's content width, followed as the window changes. */
function useWidth(ref: React.RefObject<HTMLElement | null>): number {
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    setWidth(element.clientWidth);
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => setWidth(element.clientWidth));
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref]);
  return width;
}

const HEIGHT = 200;
const MARGIN = { top: 10, right: 8, bottom: 26, left: 52 };
/** Axis labels at least this far apart. */
const LABEL_SPACING_PX = 64;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

interface Frame {
  width: number;
  plotWidth: number;
  plotHeight: number;
  /** Where bucket i starts, and how wide one is. */
  x: (i: number) => number;
  step: number;
}

function frameOf(width: number, buckets: number): Frame {
  const plotWidth = Math.max(10, width - MARGIN.left - MARGIN.right);
  const step = plotWidth / Math.max(1, buckets);
  return { width, plotWidth, plotHeight: HEIGHT - MARGIN.top - MARGIN.bottom, x: (i) => MARGIN.left + i * step, step };
}

/**
 * Which buckets get a label: every n-th hour of the reader's clock (1, 2, 3, 6, 12, 24, 48…) or UTC
 * day (1, 2, 5, 7, 14, 30), the smallest that keeps labels LABEL_SPACING_PX apart.
 */
function labelled(buckets: StatisticsBucket[], granularity: Granularity, frame: Frame): boolean[] {
  const steps = granularity === 'hour' ? [1, 2, 3, 6, 12, 24, 48, 72, 168] : [1, 2, 5, 7, 14, 30, 60];
  const needed = LABEL_SPACING_PX / frame.step;
  const every = steps.find((s) => s >= needed) ?? steps[steps.length - 1];
  return buckets.map((bucket) => {
    const at = new Date(bucket.start);
    const index =
      granularity === 'hour' ? Math.floor((at.getTime() - at.getTimezoneOffset() * 60_000) / HOUR_MS) : Math.floor(at.getTime() / DAY_MS);
    return index % every === 0;
  });
}

function Axes({
  frame,
  scale,
  format,
  buckets,
  granularity,
}: {
  frame: Frame;
  scale: ReturnType<typeof niceScale>;
  format: (n: number) => string;
  buckets: StatisticsBucket[];
  granularity: Granularity;
}) {
  const y = (value: number) => MARGIN.top + frame.plotHeight * (1 - value / scale.top);
  const labels = labelled(buckets, granularity, frame);
  return (
    <g className="axes">
      {scale.ticks.map((tick) => (
        <g key={tick}>
          <line className="grid" x1={MARGIN.left} x2={frame.width - MARGIN.right} y1={y(tick)} y2={y(tick)} />
          <text className="axis-label" x={MARGIN.left - 6} y={y(tick)} dy="0.32em" textAnchor="end">
            {format(tick)}
          </text>
        </g>
      ))}
      {buckets.map((bucket, i) =>
        labels[i] ? (
          <text key={bucket.start} className="axis-label" x={frame.x(i) + frame.step / 2} y={HEIGHT - 8} textAnchor="middle">
            {bucketLabel(bucket.start, granularity).short}
          </text>
        ) : null,
      )}
    </g>
  );
}

/** Succeeded and failed deliveries per bucket, stacked; each bar names its bucket and counts on hover. */
function OutcomeBars({ buckets, granularity, width }: { buckets: StatisticsBucket[]; granularity: Granularity; width: number }) {
  const frame = frameOf(width, buckets.length);
  const scale = niceScale(Math.max(0, ...buckets.map((b) => b.succeeded + b.failed)));
  const height = (n: number) => (frame.plotHeight * n) / scale.top;
  const barWidth = frame.step >= 4 ? frame.step * 0.75 : Math.max(1, frame.step - 0.5);
  const total = totalsOf(buckets);
  return (
    <svg
      className="chart-svg"
      width={width}
      height={HEIGHT}
      role="img"
      aria-label={`Outcomes per ${granularity}: ${formatCount(total.succeeded)} succeeded and ${formatCount(total.failed)} failed in all.`}
    >
      <Axes frame={frame} scale={scale} format={formatCount} buckets={buckets} granularity={granularity} />
      {buckets.map((bucket, i) => {
        const x = frame.x(i) + (frame.step - barWidth) / 2;
        const ok = height(bucket.succeeded);
        const bad = height(bucket.failed);
        const base = MARGIN.top + frame.plotHeight;
        return (
          <g key={bucket.start} className="bar">
            <title>{`${bucketLabel(bucket.start, granularity).long}: ${formatCount(bucket.succeeded)} succeeded, ${formatCount(bucket.failed)} failed, ${formatCount(bucket.attempts)} attempts`}</title>
            {/* The whole column answers the hover, not only the bar's few pixels. */}
            <rect className="hover-target" x={frame.x(i)} y={MARGIN.top} width={frame.step} height={frame.plotHeight} />
            {ok > 0 && <rect className="bar-succeeded" x={x} y={base - ok} width={barWidth} height={ok} />}
            {bad > 0 && <rect className="bar-failed" x={x} y={base - ok - bad} width={barWidth} height={bad} />}
          </g>
        );
      })}
    </svg>
  );
}

/** p50 and p95 of successful attempts per bucket; buckets without any leave a gap in the lines. */
function LatencyLines({ buckets, granularity, width }: { buckets: StatisticsBucket[]; granularity: Granularity; width: number }) {
  const frame = frameOf(width, buckets.length);
  const scale = niceScale(Math.max(0, ...buckets.map((b) => b.latency_ms.p95 ?? 0)));
  const y = (ms: number) => MARGIN.top + frame.plotHeight * (1 - ms / scale.top);
  const center = (i: number) => frame.x(i) + frame.step / 2;
  const line = (pick: (b: StatisticsBucket) => number | null) => {
    let path = '';
    let drawing = false;
    buckets.forEach((bucket, i) => {
      const value = pick(bucket);
      if (value === null) {
        drawing = false;
        return;
      }
      path += `${drawing ? 'L' : 'M'}${center(i).toFixed(1)},${y(value).toFixed(1)}`;
      drawing = true;
    });
    return path;
  };
  // A point alone between gaps would be a line of no length: it gets a dot.
  const lonely = (pick: (b: StatisticsBucket) => number | null) =>
    buckets
      .map((bucket, i) => ({ i, value: pick(bucket) }))
      .filter(({ i, value }) => {
        const before = i === 0 ? null : pick(buckets[i - 1]);
        const after = i === buckets.length - 1 ? null : pick(buckets[i + 1]);
        return value !== null && before === null && after === null;
      });
  const p50 = (b: StatisticsBucket) => b.latency_ms.p50;
  const p95 = (b: StatisticsBucket) => b.latency_ms.p95;
  return (
    <svg
      className="chart-svg"
      width={width}
      height={HEIGHT}
      role="img"
      aria-label={`Latency per ${granularity}, p50 and p95 in milliseconds.`}
    >
      <Axes frame={frame} scale={scale} format={(ms) => (ms === 0 ? '0' : formatMs(ms))} buckets={buckets} granularity={granularity} />
      {buckets.map((bucket, i) => (
        <rect key={bucket.start} className="hover-target" x={frame.x(i)} y={MARGIN.top} width={frame.step} height={frame.plotHeight}>
          <title>{`${bucketLabel(bucket.start, granularity).long}: p50 ${formatMs(bucket.latency_ms.p50)}, p95 ${formatMs(bucket.latency_ms.p95)}`}</title>
        </rect>
      ))}
      <path className="line-p95" d={line(p95)} />
      <path className="line-p50" d={line(p50)} />
      {lonely(p95).map(({ i, value }) => (
        <circle key={`p95-${i}`} className="dot-p95" cx={center(i)} cy={y(value!)} r={2.5} />
      ))}
      {lonely(p50).map(({ i, value }) => (
        <circle key={`p50-${i}`} className="dot-p50" cx={center(i)} cy={y(value!)} r={2.5} />
      ))}
    </svg>
  );
}

function Reasons({ errors }: { errors: [string, number][] }) {
  return (
    <div>
      <h3>Why attempts failed</h3>
      {errors.length === 0 ? (
        <p className="muted">No attempt failed.</p>
      ) : (
        <ul className="reasons">
          {errors.map(([kind, n]) => (
            <li key={kind}>
              <span>{reasonWords(kind)}</span> <strong>{formatCount(n)}</strong>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function ByEvent({ byEvent }: { byEvent: Record<string, { succeeded: number; failed: number }> }) {
  const rows = Object.entries(byEvent).sort((a, b) => b[1].succeeded + b[1].failed - (a[1].succeeded + a[1].failed));
  return (
    <div>
      <h3>By event type</h3>
      {rows.length === 0 ? (
        <p className="muted">No delivery ended in this range.</p>
      ) : (
        <div className="table-scroll" tabIndex={0} role="region" aria-label="Outcomes by event type">
          <table className="log by-event">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col" className="number">
                  Succeeded
                </th>
                <th scope="col" className="number">
                  Failed
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map(([event, counts]) => (
                <tr key={event}>
                  <td>
                    <code>{event}</code>
                  </td>
                  <td className="number" data-label="Succeeded">
                    {formatCount(counts.succeeded)}
                  </td>
                  <td className="number" data-label="Failed">
                    {formatCount(counts.failed)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

/** The charts' numbers, for a screen reader and for whoever wants them exactly. Newest first. */
function BucketTable({ buckets, granularity }: { buckets: StatisticsBucket[]; granularity: Granularity }) {
  return (
    <div className="table-scroll" tabIndex={0} role="region" aria-label="Statistics per bucket">
      <table className="log buckets">
        <thead>
          <tr>
            <th scope="col">{granularity === 'hour' ? 'Hour' : 'Day'}</th>
            <th scope="col" className="number">
              Events
            </th>
            <th scope="col" className="number">
              Succeeded
            </th>
            <th scope="col" className="number">
              Failed
            </th>
            <th scope="col" className="number">
              Attempts
            </th>
            <th scope="col" className="number">
              Failed attempts
            </th>
            <th scope="col" className="number">
              p50
            </th>
            <th scope="col" className="number">
              p95
            </th>
          </tr>
        </thead>
        <tbody>
          {[...buckets].reverse().map((bucket) => (
            <tr key={bucket.start}>
              <td>{bucketLabel(bucket.start, granularity).long}</td>
              <td className="number" data-label="Events">
                {formatCount(bucket.events)}
              </td>
              <td className="number" data-label="Succeeded">
                {formatCount(bucket.succeeded)}
              </td>
              <td className="number" data-label="Failed">
                {formatCount(bucket.failed)}
              </td>
              <td className="number" data-label="Attempts">
                {formatCount(bucket.attempts)}
              </td>
              <td className="number" data-label="Failed attempts">
                {formatCount(bucket.failed_attempts)}
              </td>
              <td className="number" data-label="p50">
                {formatMs(bucket.latency_ms.p50)}
              </td>
              <td className="number" data-label="p95">
                {formatMs(bucket.latency_ms.p95)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
