import { BenchContext } from '../harness/context';
import { BenchEnvironment } from '../harness/environment';
import { HeraldClient, inParallel } from '../harness/herald-client';
import { BenchResult, Figure, writeResult } from '../harness/report';
import { BenchSink } from '../harness/sink';
import { percentile, round } from '../harness/stats';

const WINDOW_SECONDS = 10;
/** Arrivals before this much of a throttled drain has passed are left out: the window starts once every worker is sending. */
const SETTLE_MS = 1_000;

/**
 * Throttling across worker processes (issue 11, PRODUCT.md §10): two workers share one webhook
 * throttled at `per_second`, with far more due than it allows; the receiver counts arrivals in
 * every sliding one-second interval of a 10-second window (at most per_second + 1 allowed), and
 * every event must arrive exactly once, none failing. Meanwhile a second application without a
 * throttle publishes at a steady rate; its publish-to-arrival latency is compared with the same
 * load measured first with no throttled backlog (no head-of-line blocking).
 */
export async function throttle(context: BenchContext): Promise<BenchResult> {
  const limits = context.quick ? [20] : [20, 200];
  const environment = await BenchEnvironment.create(context.serverUrl);
  const throttledSink = await new BenchSink().start();
  const freeSink = await new BenchSink().start();
  try {
    const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
    const admin = new HeraldClient(api.url, 16);
    const throttled = await admin.tenant(1, throttledSink.url);
    const free = await admin.tenant(1, freeSink.url);
    const throttledApp = throttled.applicationIds[0];
    const freeApp = free.applicationIds[0];
    for (let i = 0; i < 2; i++) await environment.startWorker({ HERALD_LOG_LEVEL: 'warn' });

    // The unthrottled application's latency with nothing throttled waiting: the baseline.
    const freeRate = 50;
    const freeSeconds = context.quick ? 2 : 5;
    const baseline = await freeLatencies(admin, free.key, freeApp, freeSink, freeRate, freeSeconds);

    const figures: Figure[] = [];
    const notes: string[] = [];
    let besideThrottled: number[] = [];
    for (const perSecond of limits) {
      const put = await admin.call('PUT', `/application/${throttledApp}/webhook/throttle`, { per_second: perSecond }, throttled.key);
      if (put.status !== 200) throw new Error(`PUT throttle answered ${put.status}: ${JSON.stringify(put.body)}`);
      // Enough for the window and its start, all due at once.
      const events = Math.ceil(perSecond * (WINDOW_SECONDS + (context.quick ? 2 : 4)));
      throttledSink.reset();
      const ids: string[] = [];
      await inParallel(
        Array.from({ length: events }, (_, i) => i),
        16,
        async (i) => {
          const res = await admin.call(
            'POST',
            `/application/${throttledApp}/events`,
            { event: 'acw_start', payload: { call_id: `t-${i}` } },
            throttled.key,
          );
          if (res.status !== 202) throw new Error(`publish answered ${res.status}`);
          ids.push(res.body.data.id);
        },
      );
      if (perSecond === limits[0]) {
        // While the first throttled backlog drains: the unthrottled application again.
        besideThrottled = await freeLatencies(admin, free.key, freeApp, freeSink, freeRate, freeSeconds);
      }
      await throttledSink.waitFor(events, (events / perSecond) * 1000 * 2 + 30_000);
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // anything sent twice would arrive meanwhile

      const times = [...throttledSink.arrivals.values()].flat().sort((a, b) => a - b);
      const duplicates = [...throttledSink.arrivals.values()].filter((arrivals) => arrivals.length > 1).length;
      const missing = ids.filter((id) => !throttledSink.arrivals.has(id)).length;
      const windowStart = times[0] + SETTLE_MS;
      const windowEnd = windowStart + WINDOW_SECONDS * 1000;
      if (times[times.length - 1] < windowEnd) throw new Error(`the throttled drain ended before its ${WINDOW_SECONDS}-second window did`);
      const inWindow = times.filter((time) => time >= windowStart && time < windowEnd);
      const busiestSliding = busiestInterval(inWindow, 1000);
      const buckets = Array.from(
        { length: WINDOW_SECONDS },
        (_, s) => inWindow.filter((time) => Math.floor((time - windowStart) / 1000) === s).length,
      );
      const [{ failed }] = await environment.sql<{ failed: string }>(
        `SELECT count(*) AS failed FROM deliveries WHERE application_id = $1 AND status <> 'succeeded'`,
        [throttledApp],
      );
      figures.push(
        {
          metric: `${perSecond}/s: busiest second (any 1-s interval of ${WINDOW_SECONDS} s, 2 workers)`,
          value: busiestSliding,
          unit: 'attempts',
          target: `<= ${perSecond + 1}`,
          pass: busiestSliding <= perSecond + 1,
        },
        {
          metric: `${perSecond}/s: rate kept over the window`,
          value: round(inWindow.length / WINDOW_SECONDS, 1),
          unit: '/s',
          baseline: { name: 'limit', value: perSecond },
          ratio: round(inWindow.length / WINDOW_SECONDS / perSecond, 3),
        },
        {
          metric: `${perSecond}/s: delivered exactly once, none failed`,
          value: events - missing,
          unit: `of ${events}`,
          target: `${events}, 0 twice, 0 failed`,
          pass: missing === 0 && duplicates === 0 && Number(failed) === 0,
        },
      );
      notes.push(
        `${perSecond}/s: arrivals per whole second of the window ${buckets.join(', ')}; ${duplicates} twice; ${failed} not succeeded`,
      );
    }

    const p = (values: number[], q: number) => round(percentile(values, q), 1);
    const slowdown = p(besideThrottled, 99) / p(baseline, 99);
    figures.push(
      { metric: `unthrottled app at ${freeRate}/s, p50 / p99 alone`, value: p(baseline, 50), unit: `/ ${p(baseline, 99)} ms` },
      {
        metric: `unthrottled app at ${freeRate}/s, p99 beside a throttled backlog`,
        value: p(besideThrottled, 99),
        unit: 'ms',
        baseline: { name: 'alone', value: p(baseline, 99) },
        ratio: round(slowdown, 2),
        target: '<= 2x (no head-of-line blocking)',
        pass: slowdown <= 2,
      },
    );
    await admin.close();
    return writeResult({
      name: 'throttle',
      description: `two worker processes share one webhook throttled at ${limits.join(' and then ')}/s, with ${WINDOW_SECONDS + 4} s worth of its events due at once; the receiver's arrivals over a ${WINDOW_SECONDS}-second window (from ${SETTLE_MS} ms after the first); an unthrottled application publishing ${freeRate}/s beside it, publish-to-arrival latency against the same load alone`,
      figures,
      notes: [...notes, `unthrottled beside the backlog: p50 ${p(besideThrottled, 50)} ms`],
    });
  } finally {
    await environment.dispose();
    await throttledSink.close();
    await freeSink.close();
  }
}

/** The largest number of `times` (sorted, ms) inside any interval of `lengthMs`. */
function busiestInterval(times: number[], lengthMs: number): number {
  let busiest = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last] - times[first] >= lengthMs) first++;
    busiest = Math.max(busiest, last - first + 1);
  }
  return busiest;
}

/** Publishes `rate` events a second for `seconds` to the unthrottled application; each one's time from publish to arrival. */
async function freeLatencies(
  admin: HeraldClient,
  key: string,
  applicationId: number,
  sink: BenchSink,
  rate: number,
  seconds: number,
): Promise<number[]> {
  sink.reset();
  const sentAt = new Map<string, number>();
  const total = rate * seconds;
  for (let i = 0; i < total; i++) {
    const due = performance.now() + 1000 / rate;
    const started = performance.timeOrigin + performance.now();
    const res = await admin.call(
      'POST',
      `/application/${applicationId}/events`,
      { event: 'acw_start', payload: { call_id: `f-${i}` } },
      key,
    );
    if (res.status !== 202) throw new Error(`publish answered ${res.status}`);
    sentAt.set(res.body.data.id, started);
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  await sink.waitFor(total, 60_000);
  return [...sentAt].map(([id, sent]) => sink.arrivals.get(id)![0] - sent);
}
