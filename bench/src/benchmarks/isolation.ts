import { BenchContext, scaled } from '../harness/context';
import { DatabaseFootprint } from '../harness/database-footprint';
import { deliveryLatencies, waitForAttempts } from '../harness/delivery-load';
import { BenchEnvironment } from '../harness/environment';
import { HeraldClient } from '../harness/herald-client';
import { BenchResult, Figure, writeResult } from '../harness/report';
import { BenchSink } from '../harness/sink';
import { percentile, round } from '../harness/stats';

/**
 * Isolation between applications (PRODUCT.md §17, issue 23). Application B publishes single
 * events open-loop at B_RATE/s to its receiver on 127.0.0.1 while application A, whose receiver
 * is another host (127.0.0.2), is in one of four shapes, each on its own database, api and worker
 * with the default caps (16 per host per worker, HERALD_ENDPOINT_MAX_IN_FLIGHT 16):
 * - B alone: the baseline, measured in the same run;
 * - A hanging: A's receiver never answers (each attempt ends at the 5 s timeout), A_BACKLOG queued;
 * - A slow: A's receiver answers after SLOW_MS, A_BACKLOG queued;
 * - A flooding: FLOOD events queued for A, its receiver answering in FLOOD_REPLY_MS.
 * Reported: B's publish-to-receipt p50 and p99 against B alone (targets: p50 ≤ 2×, p99 ≤
 * max(2×, +250 ms)); under the flood, A's drain rate against what its cap allows (16 in flight /
 * 20 ms = 800/s; target ≥ 90%) and against A flooding with no B, and the row updates and commits
 * per delivery from PostgreSQL's statistics (targets ≤ 2 and ≤ 0.2).
 */
const B_RATE = 50;
const A_BACKLOG = 2_000;
const SLOW_MS = 2_000;
const FLOOD_REPLY_MS = 20;
const ENDPOINT_CAP = 16;
const WORKER_ENV = { HERALD_LOG_LEVEL: 'warn', HERALD_DELIVERY_TIMEOUT_SECONDS: '5' };

export type Shape = 'B alone' | 'A hanging' | 'A slow' | 'A flooding';

interface Measured {
  latencies: number[];
  /** A's receipts per second while B was measured (flooding only). */
  aDrainRate?: number;
  /** How long A's receiver took per answer, as it saw it (ms). */
  aAnswerMs?: number;
  rowUpdatesPerDelivery?: number;
  commitsPerDelivery?: number;
}

export async function isolation(context: BenchContext): Promise<BenchResult> {
  const seconds = context.quick ? 2 : context.seconds;
  const flood = scaled(context, 20_000, 400);
  const results = new Map<Shape, Measured>();
  for (const shape of ['B alone', 'A hanging', 'A slow', 'A flooding'] as Shape[]) {
    results.set(shape, await measure(context, shape, seconds, flood));
  }
  const floodAlone = await floodDrainAlone(context, flood);

  const alone = results.get('B alone')!;
  const baseP50 = percentile(alone.latencies, 50);
  const baseP99 = percentile(alone.latencies, 99);
  const figures: Figure[] = [
    { metric: 'B alone: publish-to-receipt p50', value: round(baseP50, 1), unit: 'ms' },
    { metric: 'B alone: publish-to-receipt p99', value: round(baseP99, 1), unit: 'ms' },
  ];
  for (const shape of ['A hanging', 'A slow', 'A flooding'] as Shape[]) {
    const m = results.get(shape)!;
    const p50 = percentile(m.latencies, 50);
    const p99 = percentile(m.latencies, 99);
    figures.push(
      {
        metric: `${shape}: B's p50`,
        value: round(p50, 1),
        unit: 'ms',
        baseline: { name: 'B alone', value: round(baseP50, 1) },
        ratio: round(p50 / baseP50, 2),
        target: '<= 2x B alone',
        pass: p50 <= 2 * baseP50,
      },
      {
        metric: `${shape}: B's p99`,
        value: round(p99, 1),
        unit: 'ms',
        baseline: { name: 'B alone', value: round(baseP99, 1) },
        ratio: round(p99 / baseP99, 2),
        target: '<= max(2x, +250 ms) of B alone',
        pass: p99 <= Math.max(2 * baseP99, baseP99 + 250),
      },
    );
  }
  const flooding = results.get('A flooding')!;
  const allowed = ENDPOINT_CAP / (FLOOD_REPLY_MS / 1000);
  const allowedAtAnswers = ENDPOINT_CAP / (flooding.aAnswerMs! / 1000);
  figures.push(
    {
      metric: "A flooding: A's drain rate while B publishes",
      value: Math.round(flooding.aDrainRate!),
      unit: '/s',
      baseline: { name: `its cap allows (${ENDPOINT_CAP} in flight / ${FLOOD_REPLY_MS} ms)`, value: allowed },
      ratio: round(flooding.aDrainRate! / allowed, 3),
      target: '>= 90% of what its cap allows',
      pass: flooding.aDrainRate! >= 0.9 * allowed,
    },
    {
      metric: "A flooding: A's drain rate against its receiver's own answer time",
      value: Math.round(flooding.aDrainRate!),
      unit: '/s',
      baseline: {
        name: `${ENDPOINT_CAP} in flight / ${round(flooding.aAnswerMs!, 1)} ms (mean answer, as the receiver saw it)`,
        value: Math.round(allowedAtAnswers),
      },
      ratio: round(flooding.aDrainRate! / allowedAtAnswers, 3),
    },
    {
      metric: "A flooding: A's drain rate against A flooding alone",
      value: Math.round(flooding.aDrainRate!),
      unit: '/s',
      baseline: { name: 'A flooding, no B (same run)', value: Math.round(floodAlone.rate) },
      ratio: round(flooding.aDrainRate! / floodAlone.rate, 3),
    },
    {
      metric: "A flooding alone: updates of a delivery's rows (deliveries, delivery_queue) per A's delivery",
      value: round(floodAlone.ownRowUpdatesPerDelivery, 3),
      unit: '',
      target: '<= 2',
      pass: floodAlone.ownRowUpdatesPerDelivery <= 2,
    },
    {
      metric: "A flooding alone: row updates per A's delivery (every table)",
      value: round(floodAlone.rowUpdatesPerDelivery, 3),
      unit: '',
    },
    {
      metric: "A flooding alone: commits per A's delivery",
      value: round(floodAlone.commitsPerDelivery, 3),
      unit: '',
      target: '<= 0.2',
      pass: floodAlone.commitsPerDelivery <= 0.2,
    },
    {
      metric: 'A flooding with B: row updates per delivery (A and B)',
      value: round(flooding.rowUpdatesPerDelivery!, 3),
      unit: '',
    },
    {
      metric: 'A flooding with B: commits per delivery (A and B)',
      value: round(flooding.commitsPerDelivery!, 3),
      unit: '',
    },
  );
  return writeResult({
    name: 'isolation',
    description: `Application B publishing ${B_RATE}/s while A's receiver hangs, is slow (${SLOW_MS} ms) or A floods (${flood} queued, ${FLOOD_REPLY_MS} ms answers); each shape its own database, api and worker with the default caps`,
    figures,
    notes: [
      `B's events are published open-loop at ${B_RATE}/s for ${seconds} s; latency is publish request start to first receipt.`,
      "Row updates and commits are PostgreSQL's (pg_stat_user_tables, pg_stat_database) over the whole flood, per delivery: A's alone (the targets; the row updates' target counts a delivery's own rows, as storage does, beside the total of every table, where a webhook's last success and the statistics' fold add a few a second), and A's and B's together, where each of B's single events adds its own publish, claim and finish commits.",
    ],
  });
}

/** One shape: A's receiver and backlog in place, then B's latencies measured while A's work goes on. */
export async function measure(context: BenchContext, shape: Shape, seconds: number, flood: number): Promise<Measured> {
  const bSink = await new BenchSink().start();
  const aDelay = shape === 'A hanging' ? Infinity : shape === 'A slow' ? SLOW_MS : FLOOD_REPLY_MS;
  const aSink = await new BenchSink(() => 200, aDelay, '127.0.0.2').start();
  const environment = await BenchEnvironment.create(context.serverUrl);
  const footprint = new DatabaseFootprint(environment);
  try {
    const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
    const client = new HeraldClient(api.url, 32);
    const b = await client.tenant(1, bSink.url);
    const a = await client.tenant(1, aSink.url);
    const worker = await environment.startWorker(WORKER_ENV);
    const publishB = async (i: number) => {
      const res = await client.call('POST', `/application/${b.applicationIds[0]}/events`, { event: 'acw_start', payload: { i } }, b.key);
      if (res.status !== 202) throw new Error(`B's publish answered ${res.status}`);
      return [res.body.data.id as string];
    };
    // Warm-up: B's path is hot before anything is measured.
    await deliveryLatencies(bSink, B_RATE, 1, publishB, `isolation ${shape} warm-up`);
    const before = await footprint.snapshot(false);
    const aEvents = shape === 'B alone' ? 0 : shape === 'A flooding' ? flood : A_BACKLOG;
    await publishBacklog(client, a.applicationIds[0], a.key, aEvents);
    const aBefore = aSink.count;
    const started = performance.now();
    const latencies = await deliveryLatencies(bSink, B_RATE, seconds, publishB, `isolation ${shape}`);
    const aDrainRate = (aSink.count - aBefore) / ((performance.now() - started) / 1000);
    const measured: Measured = { latencies, aDrainRate, aAnswerMs: aSink.meanAnswerMs };
    if (shape === 'A flooding') {
      await aSink.waitFor(aEvents, 300_000);
      await waitForAttempts(environment, aEvents + bSink.count);
      // Stopped, so that their backends report their table statistics (an idle one may wait 10 s).
      await client.close();
      await worker.stop();
      await api.stop();
      const after = await footprint.snapshot(false);
      const between = footprint.countsBetween(before, after);
      const delivered = aEvents + latencies.length;
      const updates = [...between.tables.values()].reduce((sum, t) => sum + t.updated, 0);
      measured.rowUpdatesPerDelivery = updates / delivered;
      measured.commitsPerDelivery = between.commits / delivered;
      return measured;
    }
    await client.close();
    await worker.stop();
    return measured;
  } finally {
    await environment.dispose();
    await aSink.close();
    await bSink.close();
  }
}

/**
 * A's flood drained with no B: the same-run baseline for its drain rate, and what A's deliveries
 * cost PostgreSQL (row updates and commits per delivery, from the flood's publish to its last attempt).
 */
async function floodDrainAlone(
  context: BenchContext,
  flood: number,
): Promise<{ rate: number; rowUpdatesPerDelivery: number; ownRowUpdatesPerDelivery: number; commitsPerDelivery: number }> {
  const aSink = await new BenchSink(() => 200, FLOOD_REPLY_MS, '127.0.0.2').start();
  const environment = await BenchEnvironment.create(context.serverUrl);
  const footprint = new DatabaseFootprint(environment);
  try {
    const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
    const client = new HeraldClient(api.url, 32);
    const a = await client.tenant(1, aSink.url);
    const before = await footprint.snapshot(false);
    await publishBacklog(client, a.applicationIds[0], a.key, flood);
    const worker = await environment.startWorker(WORKER_ENV);
    // Measured from the first receipt to the last, as the flood with B is over its middle.
    await aSink.waitFor(1, 30_000);
    const started = performance.now();
    await aSink.waitFor(flood, 300_000);
    const rate = (flood - 1) / ((performance.now() - started) / 1000);
    await waitForAttempts(environment, flood);
    // Stopped, so that their backends report their table statistics (an idle one may wait 10 s).
    await client.close();
    await worker.stop();
    await api.stop();
    const between = footprint.countsBetween(before, await footprint.snapshot(false));
    const updates = [...between.tables.values()].reduce((sum, t) => sum + t.updated, 0);
    // A delivery's own rows, as `storage` counts them (its comment says why): a webhook's last
    // success and the statistics' fold are written once a second, not per delivery.
    const ownRows = ['deliveries', 'delivery_queue'].reduce((sum, table) => sum + (between.tables.get(table)?.updated ?? 0), 0);
    return {
      rate,
      rowUpdatesPerDelivery: updates / flood,
      ownRowUpdatesPerDelivery: ownRows / flood,
      commitsPerDelivery: between.commits / flood,
    };
  } finally {
    await environment.dispose();
    await aSink.close();
  }
}

/** `count` events queued for one application, in batches of 100. */
async function publishBacklog(client: HeraldClient, applicationId: number, key: string, count: number): Promise<void> {
  for (let i = 0; i < count; i += 100) {
    const events = Array.from({ length: Math.min(100, count - i) }, (_, k) => ({ event: 'acw_start', payload: { n: i + k } }));
    const res = await client.call('POST', `/application/${applicationId}/events/batch`, { events }, key);
    if (res.status !== 202) throw new Error(`A's batch answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
}
