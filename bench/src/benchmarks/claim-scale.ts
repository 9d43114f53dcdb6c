import { randomUUID } from 'node:crypto';
import { CLAIM_SQL, FINISH_SQL, DeliveryQueueRepository, PgPool } from '@herald/database/queue';
import { BenchContext, scaled } from '../harness/context';
import { BenchEnvironment, withClient } from '../harness/environment';
import { HeraldClient } from '../harness/herald-client';
import { BenchResult, writeResult } from '../harness/report';
import { insertDueBacklog, settleTables } from '../harness/seed';
import { BenchSink } from '../harness/sink';
import { percentile, round } from '../harness/stats';

const CLAIM_LIMIT = 64;

/**
 * Whether a claim's cost grows with the backlog (issue 12): the worker's claim
 * (DeliveryQueueRepository.claim, the statement it runs) timed with 1,000 and with 1,000,000
 * deliveries due, the claimed rows put back due after each claim so the backlog keeps its size,
 * and each claim's plan (EXPLAIN ANALYZE, rolled back). Then the drain rate of a 1,000,000
 * backlog by one worker against that of a 20,000 backlog, to a local sink.
 */
export async function claimScale(context: BenchContext): Promise<BenchResult> {
  const small = scaled(context, 1_000, 200);
  const large = scaled(context, 1_000_000, 20_000);
  const claims = scaled(context, 300, 30);
  const drainSmall = scaled(context, 20_000, 500);
  const drainLarge = scaled(context, 1_000_000, 5_000);
  const sink = await new BenchSink().start();
  const environment = await BenchEnvironment.create(context.serverUrl);
  const pool = new PgPool({ url: environment.databaseUrl, poolSize: 2 });
  try {
    const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
    const admin = new HeraldClient(api.url, 4);
    const { applicationIds } = await admin.tenant(context.quick ? 2 : 20, sink.url);
    await admin.close();
    await api.stop();
    const queue = new DeliveryQueueRepository(pool);
    const settle = () => withClient(environment.databaseUrl, (client) => settleTables(client, ['events', 'deliveries', 'delivery_queue']));

    const timeClaims = async (backlog: number, tag: string) => {
      await environment.sql(`DELETE FROM delivery_queue`);
      await environment.sql(`DELETE FROM deliveries`);
      await environment.sql(`DELETE FROM events`);
      await insertDueBacklog(environment.databaseUrl, applicationIds, backlog, tag);
      await settle();
      const times: number[] = [];
      let lastClaimed: string[] = [];
      for (let i = 0; i < claims; i++) {
        const now = new Date();
        const started = performance.now();
        const batch = await queue.claim({
          limit: CLAIM_LIMIT,
          token: randomUUID(),
          now,
          leaseUntil: new Date(now.getTime() + 60_000),
          hostsInFlight: new Map(),
          hostCap: 64,
          endpointCap: 1_000,
          // One worker's claims, as a worker makes them: under its own holder id, each claim's
          // endpoint_claims row replaces the last. Without one, each claim counted as another
          // worker's, whose rows stay until their lease ends: 300 claims read 300 rows each.
          holder: 'claim-scale',
        });
        times.push(performance.now() - started);
        lastClaimed = batch.deliveries.map((delivery) => delivery.id);
        if (batch.deliveries.length !== CLAIM_LIMIT)
          throw new Error(`claimed ${batch.deliveries.length} of ${CLAIM_LIMIT} with ${backlog} due`);
        // Back in the queue, due now (behind the rest): the backlog keeps its size.
        await pool.sql(
          `UPDATE delivery_queue SET lease_token = NULL, lease_until = NULL, due_at = now() WHERE delivery_id = ANY($1::text[])`,
          [batch.deliveries.map((delivery) => delivery.id)],
        );
      }
      // The plan the worker's prepared statement runs once PostgreSQL may cache a generic plan
      // (after five executions): forced generic here, the worst it could pick, in a rolled-back
      // transaction.
      const plan = await withClient(environment.databaseUrl, async (client) => {
        await client.query('BEGIN');
        await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
        // As the worker's sessions run (PgPool): no JIT compilation inside the timed plan.
        await client.query('SET LOCAL jit = off');
        await client.query(`PREPARE claim_explained AS ${CLAIM_SQL}`);
        // EXECUTE takes literals, not bind parameters.
        const at = (ms: number) => client.escapeLiteral(new Date(ms).toISOString());
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) EXECUTE claim_explained(${at(Date.now())}, '{}', ${CLAIM_LIMIT}, 'explain', ${at(Date.now() + 60_000)}, 64, '{}', '{}', 1000, 0, 128, 'explain', '{}', '{}', 1, '{}', 1)`,
        );
        await client.query('ROLLBACK');
        return rows.map((row) => row['QUERY PLAN']);
      });
      // The finish of the last claim's rows as the worker's prepared statement runs it once
      // PostgreSQL caches a generic plan: forced generic here, run and rolled back. Every table
      // it touches must be reached by key, never scanned.
      const finishPlan = await withClient(environment.databaseUrl, async (client) => {
        await client.query('BEGIN');
        await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
        await client.query('SET LOCAL jit = off');
        await client.query(`UPDATE delivery_queue SET lease_token = 'explain' WHERE delivery_id = ANY($1::text[])`, [lastClaimed]);
        await client.query(`PREPARE finish_explained AS ${FINISH_SQL}`);
        // EXECUTE takes literals, not bind parameters: each array written out.
        const array = (values: unknown[], type: string) =>
          `ARRAY[${values.map((value) => (value === null ? 'NULL' : client.escapeLiteral(String(value)))).join(', ')}]::${type}[]`;
        const each = (value: unknown, type: string) => array(Array<unknown>(lastClaimed.length).fill(value), type);
        const now = new Date().toISOString();
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(
          `EXPLAIN (ANALYZE, COSTS OFF) EXECUTE finish_explained(${[
            array(lastClaimed, 'text'),
            each('explain', 'text'),
            each('succeeded', 'text'),
            each(null, 'timestamptz'),
            each(now, 'timestamptz'),
            each(now, 'timestamptz'),
            each(12, 'int'),
            each('http://127.0.0.1/hook', 'text'),
            each(200, 'int'),
            each('ok', 'text'),
            each(null, 'text'),
            each('{}', 'text'),
            each(null, 'text'),
            each(null, 'text'),
            each(false, 'boolean'),
          ].join(', ')})`,
        );
        await client.query('ROLLBACK');
        return rows.map((row) => row['QUERY PLAN']);
      });
      const scans = finishPlan.filter((line) =>
        /Seq Scan on (deliveries|delivery_queue|delivery_attempts|webhooks|delivery_stats)\b/.test(line),
      );
      // A table of a few hundred rows is rightly read whole; with the large queue, never.
      if (backlog === large && scans.length > 0)
        throw new Error(`the finish scans a table with ${backlog} queued:\n${finishPlan.join('\n')}`);
      return { p50: percentile(times, 50), p99: percentile(times, 99), plan, finishPlan };
    };
    const few = await timeClaims(small, 'few');
    const many = await timeClaims(large, 'many');
    for (const [backlog, plan] of [
      [small, few.plan],
      [large, many.plan],
    ] as const) {
      // The only sorts allowed are of the picks (each application's share), never one of the queue:
      // each application's part of the ready index is read in due order.
      const sortsDeliveries = plan.some((line) => /Sort Key: q(_\d+)?\.due_at/.test(line));
      const ordered = plan.some((line) => line.includes('Index Scan using delivery_queue_ready_idx'));
      if (sortsDeliveries || !ordered) throw new Error(`the claim does not scan in index order with ${backlog} due:\n${plan.join('\n')}`);
    }

    // The backlog is written and settled before the worker starts (a running worker would take
    // some while it is written); the rate runs from the first arrival to the last, so the
    // worker's start-up is not in it.
    const drain = async (backlog: number, tag: string) => {
      await environment.sql(`DELETE FROM delivery_attempts`);
      await environment.sql(`DELETE FROM delivery_queue`);
      await environment.sql(`DELETE FROM deliveries`);
      await environment.sql(`DELETE FROM events`);
      await insertDueBacklog(environment.databaseUrl, applicationIds, backlog, tag);
      await settle();
      sink.reset();
      const worker = await environment.startWorker({ HERALD_WORKER_HOST_CONCURRENCY: '64', HERALD_LOG_LEVEL: 'warn' });
      try {
        await sink.waitFor(backlog, 3_600_000);
        // A loop, not Math.min(...): a million arguments overflow the stack.
        let first = Infinity;
        let last = -Infinity;
        for (const [at] of sink.arrivals.values()) {
          first = Math.min(first, at);
          last = Math.max(last, at);
        }
        return Math.round((backlog - 1) / ((last - first) / 1000));
      } finally {
        await worker.stop();
      }
    };
    const smallRate = await drain(drainSmall, 'ds');
    const largeRate = await drain(drainLarge, 'dl');

    const ratio = many.p50 / few.p50;
    return writeResult({
      name: 'claim-scale',
      description: `the worker's claim of ${CLAIM_LIMIT} (DeliveryQueueRepository.claim) ${claims} times with ${small} and with ${large} deliveries due (claimed rows put back due each time); then one worker draining ${drainSmall} and ${drainLarge} due deliveries to a local sink`,
      figures: [
        { metric: `claim p50 / p99, ${small} due`, value: round(few.p50, 2), unit: `/ ${round(few.p99, 2)} ms` },
        {
          metric: `claim p50, ${large} due`,
          value: round(many.p50, 2),
          unit: `ms (p99 ${round(many.p99, 2)})`,
          baseline: { name: `${small} due`, value: round(few.p50, 2) },
          ratio: round(ratio, 2),
          target: '<= 2x',
          pass: ratio <= 2,
        },
        { metric: `drain of ${drainSmall}`, value: smallRate, unit: 'deliveries/s' },
        {
          metric: `drain of ${drainLarge}`,
          value: largeRate,
          unit: 'deliveries/s',
          baseline: { name: `${drainSmall}`, value: smallRate },
          ratio: round(largeRate / smallRate, 3),
          target: '>= 90%',
          pass: largeRate / smallRate >= 0.9,
        },
      ],
      plans: {
        [`claim, ${small} due`]: few.plan,
        [`claim, ${large} due`]: many.plan,
        [`finish of ${CLAIM_LIMIT}, ${large} queued`]: many.finishPlan,
      },
    });
  } finally {
    await pool.onApplicationShutdown();
    await environment.dispose();
    await sink.close();
  }
}
