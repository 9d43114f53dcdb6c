import { randomUUID } from 'node:crypto';
import { FINISH_SQL, FINISH_WITHOUT_STATISTICS_SQL } from '@herald/database/queue';
import pg from 'pg';
import { BenchContext, scaled } from '../harness/context';
import { BenchEnvironment, withClient } from '../harness/environment';
import { DatabaseFootprint, processCpuMs } from '../harness/database-footprint';
import { HeraldClient } from '../harness/herald-client';
import { BenchResult, Figure, writeResult } from '../harness/report';
import { settleTables } from '../harness/seed';
import { BenchSink } from '../harness/sink';
import { percentile, round } from '../harness/stats';

const EVENT_TYPES = ['acw_start', 'voice_campaign_activate'];
/** Every tenth delivery is answered 410 (final): the statistics count failures by class too. */
const GONE_EVERY = 10;

interface Drain {
  statistics: boolean;
  /** Deliveries a second, first receipt to last. */
  rate: number;
  walBytes: number;
  /** CPU of the worker process and of its PostgreSQL backends while it drained, in ms. */
  workerCpuMs: number;
  postgresCpuMs: number;
  statsUpdates: number;
  statsHotUpdates: number;
}

/**
 * PRODUCT.md §16's cost: "writing them adds no round trip per delivery and costs ≤ 5% of delivery
 * throughput". One worker drains a backlog of due deliveries (two event types over the tenant's
 * applications, one in ten answered 410) with its finish statement recording statistics and its
 * fold job summing them up (HERALD_DELIVERY_STATISTICS=on, the default) and without (off: the
 * same finish without the statistics' CTE, nothing to fold), in rounds alternated on, off, off,
 * on, … on the same database, so both see the same minutes of a shared machine. Per round: the
 * drain rate from the first receipt to the last (the worker's start-up is not in it), the WAL
 * this database wrote, and the CPU of the worker and of its PostgreSQL backends. Then the finish
 * statement alone, with and without statistics, planned and run (EXPLAIN ANALYZE, rolled back)
 * on batches of 16 attempts of 16 applications: what one batch costs PostgreSQL.
 */
export async function statistics(context: BenchContext): Promise<BenchResult> {
  const backlog = scaled(context, 10_000, 300);
  const rounds = context.quick ? 2 : 12;
  const sink = await new BenchSink((id) => (Number(id.slice(id.lastIndexOf('_') + 1)) % GONE_EVERY === 0 ? 410 : 200)).start();
  const environment = await BenchEnvironment.create(context.serverUrl);
  const footprint = new DatabaseFootprint(environment);
  try {
    const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
    const client = new HeraldClient(api.url, 8);
    const tenant = await client.tenant(context.quick ? 2 : 20, sink.url);
    for (const id of tenant.applicationIds) {
      const res = await client.call(
        'PUT',
        `/application/${id}/webhook/subscription/voice_campaign_activate`,
        { ensure_delivery: true },
        tenant.key,
      );
      if (res.status !== 200) throw new Error(`subscribing answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    await client.close();
    await api.stop();
    await footprint.prepare();

    let batch = 0;
    const drain = async (statisticsOn: boolean, count: number): Promise<Drain> => {
      await environment.sql('DELETE FROM delivery_attempts');
      await environment.sql('DELETE FROM delivery_queue');
      await environment.sql('DELETE FROM deliveries');
      await environment.sql('DELETE FROM events');
      await insertBacklog(environment.databaseUrl, tenant.applicationIds, count, `s${batch++}`);
      await withClient(environment.databaseUrl, (c) => settleTables(c, ['events', 'deliveries', 'delivery_queue', 'delivery_stats']));
      sink.reset();
      const before = await footprint.snapshot(true);
      const worker = await environment.startWorker({
        HERALD_WORKER_HOST_CONCURRENCY: '64',
        HERALD_LOG_LEVEL: 'warn',
        HERALD_DELIVERY_STATISTICS: statisticsOn ? 'on' : 'off',
      });
      const started = { worker: processCpuMs(worker.pid), postgres: await footprint.backendCpuMs() };
      await sink.waitFor(count, 600_000);
      await waitForFinished(environment, count);
      const cpu = { worker: processCpuMs(worker.pid) - started.worker, postgres: (await footprint.backendCpuMs()) - started.postgres };
      let first = Infinity;
      let last = -Infinity;
      for (const [at] of sink.arrivals.values()) {
        first = Math.min(first, at);
        last = Math.max(last, at);
      }
      await worker.stop();
      const used = await footprint.between(before, await footprint.snapshot(false));
      const stats = used.tables.get('delivery_stats') ?? { updated: 0, hotUpdated: 0 };
      return {
        statistics: statisticsOn,
        rate: (count - 1) / ((last - first) / 1000),
        walBytes: used.wal.bytes + used.wal.fullPageBytes,
        workerCpuMs: cpu.worker,
        postgresCpuMs: cpu.postgres,
        statsUpdates: stats.updated,
        statsHotUpdates: stats.hotUpdated,
      };
    };

    // Warm-up: the statistics rows of this hour exist from here on, as they would in production.
    await drain(true, Math.min(backlog, 1_000));
    await drain(false, Math.min(backlog, 1_000));
    const drains: Drain[] = [];
    // ABBA order: a drift of the machine over the run weighs on both sides alike.
    for (let i = 0; i < rounds; i++) drains.push(await drain([true, false, false, true][i % 4], backlog));

    const on = drains.filter((d) => d.statistics);
    const off = drains.filter((d) => !d.statistics);
    // Medians: on a machine other sessions share, a round now and then runs a quarter slower
    // whichever side it measures (bench/README.md, "Issue 24: delivery statistics").
    const median = (values: number[]) => percentile(values, 50);
    const perDelivery = (runs: Drain[], pick: (d: Drain) => number) => median(runs.map(pick)) / backlog;
    const rateOn = median(on.map((d) => d.rate));
    const rateOff = median(off.map((d) => d.rate));
    const walOn = perDelivery(on, (d) => d.walBytes);
    const walOff = perDelivery(off, (d) => d.walBytes);
    const pgOn = perDelivery(on, (d) => d.postgresCpuMs) * 1000;
    const pgOff = perDelivery(off, (d) => d.postgresCpuMs) * 1000;
    const workerOn = perDelivery(on, (d) => d.workerCpuMs) * 1000;
    const workerOff = perDelivery(off, (d) => d.workerCpuMs) * 1000;
    const updates = on.reduce((sum, d) => sum + d.statsUpdates, 0);
    const hot = on.reduce((sum, d) => sum + d.statsHotUpdates, 0);
    const finish = await finishStatementCost(environment, tenant.applicationIds, context.quick ? 10 : 200);
    const [{ rows, bytes }] = await environment.sql<{ rows: string; bytes: string }>(
      `SELECT count(*)::text AS rows, COALESCE(sum(pg_column_size(s.*)), 0)::text AS bytes FROM delivery_stats s`,
    );
    const figures: Figure[] = [
      {
        metric: 'drain with statistics',
        value: Math.round(rateOn),
        unit: 'deliveries/s',
        baseline: { name: 'the same without (HERALD_DELIVERY_STATISTICS=off)', value: Math.round(rateOff) },
        ratio: round(rateOn / rateOff, 3),
        target: '>= 95% of baseline',
        pass: rateOn / rateOff >= 0.95,
      },
      {
        metric: 'PostgreSQL CPU per delivery, with statistics',
        value: Math.round(pgOn),
        unit: 'us',
        baseline: { name: 'without', value: Math.round(pgOff) },
        ratio: round(pgOn / pgOff, 3),
      },
      {
        metric: 'worker CPU per delivery, with statistics',
        value: Math.round(workerOn),
        unit: 'us',
        baseline: { name: 'without', value: Math.round(workerOff) },
        ratio: round(workerOn / workerOff, 3),
      },
      {
        metric: 'WAL per delivery, with statistics',
        value: Math.round(walOn),
        unit: 'bytes',
        baseline: { name: 'without', value: Math.round(walOff) },
        ratio: round(walOn / walOff, 3),
      },
      {
        metric: `finish statement, ${FINISH_BATCH} attempts of ${FINISH_BATCH} applications, with statistics`,
        value: round(finish.on, 3),
        unit: 'ms (planning + execution, median)',
        baseline: { name: 'without', value: round(finish.off, 3) },
        ratio: round(finish.on / finish.off, 3),
      },
      {
        metric: 'statistics row updates that were HOT',
        value: updates === 0 ? 0 : round((100 * hot) / updates, 1),
        unit: `% of ${updates}`,
      },
      {
        metric: 'statistics rows kept',
        value: Number(rows),
        unit: `rows, ${Math.round(Number(bytes) / Math.max(1, Number(rows)))} bytes each`,
      },
    ];
    return writeResult({
      name: 'statistics',
      description: `one worker draining ${backlog} due deliveries (${EVENT_TYPES.length} event types, ${context.quick ? 2 : 20} applications, one in ${GONE_EVERY} answered 410) with delivery statistics written by its finish statement and without, ${rounds} rounds alternated (ABBA); medians of each side`,
      figures,
      notes: drains.map(
        (d) =>
          `${d.statistics ? 'on ' : 'off'}: ${Math.round(d.rate)} deliveries/s, WAL ${Math.round(d.walBytes / backlog)} B, PostgreSQL ${Math.round((d.postgresCpuMs * 1000) / backlog)} us, worker ${Math.round((d.workerCpuMs * 1000) / backlog)} us per delivery`,
      ),
    });
  } finally {
    await footprint.close();
    await environment.dispose();
    await sink.close();
  }
}

const FINISH_BATCH = 16;

/**
 * The finish statement as the worker sends it, with statistics and without, alternated `times`
 * times each on batches of FINISH_BATCH leased deliveries of as many applications (every attempt
 * its own key: the costliest shape), EXPLAIN (ANALYZE) in a rolled-back transaction: the median
 * of planning plus execution time, in ms.
 */
async function finishStatementCost(
  environment: BenchEnvironment,
  applicationIds: number[],
  times: number,
): Promise<{ on: number; off: number }> {
  const spent: Record<'on' | 'off', number[]> = { on: [], off: [] };
  await withClient(environment.databaseUrl, async (client) => {
    for (let i = 0; i < 2 * times; i++) {
      const variant = i % 2 === 0 ? 'on' : 'off';
      await client.query('BEGIN');
      const tag = randomUUID().slice(0, 8);
      const ids = Array.from({ length: FINISH_BATCH }, (_, k) => `dlv_f${tag}_${k}`);
      await client.query(
        `WITH ev AS (
           INSERT INTO events (id, application_id, event_type, payload, created_at)
           SELECT replace(id, 'dlv_', 'evt_'), ($2::int[])[1 + (k::int - 1) % cardinality($2::int[])], 'acw_start', '{}', now()
             FROM unnest($1::text[]) WITH ORDINALITY u(id, k)
           RETURNING id, application_id
         ), dl AS (
           INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
           SELECT replace(id, 'evt_', 'dlv_'), id, application_id, 'acw_start', 'pending', now(), now(), now() FROM ev
           RETURNING id, application_id
         )
         INSERT INTO delivery_queue (delivery_id, application_id, due_at, lease_token, lease_until)
         SELECT id, application_id, now(), 'bench', now() + interval '1 minute' FROM dl`,
        [ids, applicationIds.slice(0, FINISH_BATCH)],
      );
      const each = <T>(value: T) => Array<T>(FINISH_BATCH).fill(value);
      const now = new Date();
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, SUMMARY, TIMING OFF, COSTS OFF) ${variant === 'on' ? FINISH_SQL : FINISH_WITHOUT_STATISTICS_SQL}`,
        [
          ids,
          each('bench'),
          each('succeeded'),
          each(null),
          each(now),
          each(now),
          ids.map((_, k) => 5 + k),
          each('http://127.0.0.1/hook'),
          each(200),
          each('ok'),
          each(null),
          each('{}'),
          each(null),
          each(null),
          each(false),
        ],
      );
      await client.query('ROLLBACK');
      const text = rows.map((row) => row['QUERY PLAN']).join('\n');
      const ms = (label: string) => Number(new RegExp(`${label} Time: ([\\d.]+) ms`).exec(text)?.[1]);
      // The first few of each warm the caches; the rest count.
      if (i >= 10) spent[variant].push(ms('Planning') + ms('Execution'));
    }
  });
  return { on: percentile(spent.on, 50), off: percentile(spent.off, 50) };
}

/**
 * `count` deliveries (with their events) due now, over the applications and event types round-robin,
 * in one statement. Ids end in `_<n>`, which the sink reads to answer one in GONE_EVERY with 410.
 */
async function insertBacklog(databaseUrl: string, applicationIds: number[], count: number, tag: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `WITH ev AS (
         INSERT INTO events (id, application_id, event_type, payload, created_at)
         SELECT 'evt_' || $3::text || '_' || g, ($1::int[])[1 + g % cardinality($1::int[])],
                ($4::text[])[1 + (g / cardinality($1::int[])) % cardinality($4::text[])], '{"call_id":"c-' || g || '"}', now()
           FROM generate_series(1, $2::int) g
         RETURNING id, application_id, event_type)
       , dl AS (
         INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
         SELECT replace(id, 'evt_', 'dlv_'), id, application_id, event_type, 'pending', now(), now(), now() FROM ev
         RETURNING id, application_id)
       INSERT INTO delivery_queue (delivery_id, application_id, due_at) SELECT id, application_id, now() FROM dl`,
      [applicationIds, count, tag, EVENT_TYPES],
    );
  } finally {
    await client.end();
  }
}

/** Attempts are recorded after the receipt: waits until every delivery has left the queue. */
async function waitForFinished(environment: BenchEnvironment, count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const [{ left }] = await environment.sql<{ left: string }>('SELECT count(*)::text AS left FROM delivery_queue');
    if (Number(left) === 0) return;
    if (Date.now() > deadline) throw new Error(`${left} of ${count} deliveries still queued a minute after their receipt`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
