import { DELIVERY_CHANNEL } from '@herald/database/queue';
import { BenchContext, scaled } from '../harness/context';
import { BenchEnvironment, withClient } from '../harness/environment';
import { HeraldClient } from '../harness/herald-client';
import { requestLoad } from '../harness/load';
import { BenchResult, writeResult } from '../harness/report';
import { insertDueBacklog, seedAttempts, seedDeliveries, seedEvents, settleTables } from '../harness/seed';
import { BenchSink } from '../harness/sink';
import { round } from '../harness/stats';

const CONNECTIONS = 32;
const APPLICATIONS = 20;
const DAY_MS = 24 * 3_600_000;

/**
 * What a full history costs the hot paths (issue 11): publish throughput (the api at its maximum,
 * autocannon -c 32) and claim throughput (one worker draining a backlog that falls due at once)
 * on a database holding 10,000,000 finished deliveries — with their events and one attempt each,
 * spread over 29 days, inside the retention window so nothing removes them — against an empty
 * database, in the same run. The two databases take turns phase by phase, so a drift of the
 * machine falls on both. History is written with generate_series, as Herald writes rows.
 */
export async function history(context: BenchContext): Promise<BenchResult> {
  const historySize = scaled(context, 10_000_000, 20_000);
  const backlog = scaled(context, 20_000, 500);
  const rounds = context.quick ? 1 : 2;
  const sink = await new BenchSink().start();
  const empty = await BenchEnvironment.create(context.serverUrl);
  const full = await BenchEnvironment.create(context.serverUrl);
  try {
    const tenants = new Map<BenchEnvironment, { key: string; applicationIds: number[] }>();
    for (const environment of [empty, full]) {
      const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
      const admin = new HeraldClient(api.url, 4);
      tenants.set(environment, await admin.tenant(context.quick ? 2 : APPLICATIONS, sink.url));
      await admin.close();
      await api.stop();
    }

    const seedStarted = performance.now();
    const fullTenant = tenants.get(full)!;
    const perApplication = Math.ceil(historySize / fullTenant.applicationIds.length);
    const fromMs = Date.now() - 29 * DAY_MS;
    await withClient(full.databaseUrl, async (client) => {
      for (const applicationId of fullTenant.applicationIds) {
        await seedEvents(client, {
          applicationId,
          count: perApplication,
          fromMs,
          stepMs: Math.floor((28 * DAY_MS) / perApplication),
          tag: `h${applicationId}`,
        });
        await seedDeliveries(client, { applicationId, status: 'succeeded', attemptCount: 1 });
        await seedAttempts(client, { applicationId });
      }
    });
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const [{ finished }] = await full.sql<{ finished: string }>(`SELECT count(*) AS finished FROM deliveries WHERE status = 'succeeded'`);
    if (Number(finished) < historySize) throw new Error(`seeded ${finished} finished deliveries; expected ${historySize}`);

    const publishRates = new Map<BenchEnvironment, number[]>([
      [empty, []],
      [full, []],
    ]);
    const drainRates = new Map<BenchEnvironment, number[]>([
      [empty, []],
      [full, []],
    ]);
    for (let n = 0; n < rounds; n++) {
      // Alternate which database goes first, so neither always has the warmer machine.
      const order = n % 2 === 0 ? [empty, full] : [full, empty];
      for (const environment of order)
        publishRates.get(environment)!.push(await publishRate(environment, tenants.get(environment)!, context));
      for (const environment of order)
        drainRates.get(environment)!.push(await drainRate(environment, tenants.get(environment)!.applicationIds, backlog, sink, `r${n}`));
    }

    const mean = (values: number[]) => Math.round(values.reduce((sum, value) => sum + value, 0) / values.length);
    const publishEmpty = mean(publishRates.get(empty)!);
    const publishFull = mean(publishRates.get(full)!);
    const drainEmpty = mean(drainRates.get(empty)!);
    const drainFull = mean(drainRates.get(full)!);
    const [{ size }] = await full.sql<{ size: string }>(`SELECT pg_size_pretty(pg_database_size(current_database())) AS size`);
    return writeResult({
      name: 'history',
      description: `publish throughput (POST …/events, autocannon -c ${CONNECTIONS}, ${context.seconds} s, no worker) and claim throughput (one worker draining ${backlog} deliveries that fall due at once, to a local sink) with ${historySize} finished deliveries in history (events, deliveries and one attempt each, over 29 days; ${size}) against an empty database; ${rounds} round(s), the databases taking turns`,
      figures: [
        { metric: 'publish, empty database', value: publishEmpty, unit: 'events/s' },
        {
          metric: `publish, ${historySize} in history`,
          value: publishFull,
          unit: 'events/s',
          baseline: { name: 'empty database', value: publishEmpty },
          ratio: round(publishFull / publishEmpty, 3),
          target: '>= 90%',
          pass: publishFull / publishEmpty >= 0.9,
        },
        { metric: 'claim (drain), empty database', value: drainEmpty, unit: 'deliveries/s' },
        {
          metric: `claim (drain), ${historySize} in history`,
          value: drainFull,
          unit: 'deliveries/s',
          baseline: { name: 'empty database', value: drainEmpty },
          ratio: round(drainFull / drainEmpty, 3),
          target: '>= 90%',
          pass: drainFull / drainEmpty >= 0.9,
        },
      ],
      notes: [
        `publish rounds: empty ${publishRates.get(empty)!.join(', ')}; history ${publishRates.get(full)!.join(', ')} events/s`,
        `drain rounds: empty ${drainRates.get(empty)!.join(', ')}; history ${drainRates.get(full)!.join(', ')} deliveries/s`,
        `history written in ${round(seedSeconds, 0)} s`,
      ],
    });
  } finally {
    await empty.dispose();
    await full.dispose();
    await sink.close();
  }
}

/** The api's maximum publish rate on this database; what it publishes is then delivered (by drainRate's worker) so it joins the history. */
async function publishRate(
  environment: BenchEnvironment,
  tenant: { key: string; applicationIds: number[] },
  context: BenchContext,
): Promise<number> {
  await withClient(environment.databaseUrl, (client) => settleTables(client, ['events', 'deliveries', 'delivery_attempts']));
  const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
  try {
    const requests = tenant.applicationIds.map((id, i) => ({
      method: 'POST' as const,
      path: `/application/${id}/events`,
      headers: { authorization: tenant.key, 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'acw_start', payload: { call_id: `c-${i}`, agent_id: 'a-1', queue: 'support-eu' } }),
    }));
    await requestLoad({ url: api.url, connections: CONNECTIONS, duration: Math.min(2, context.seconds), requests }); // warm-up
    const load = await requestLoad({ url: api.url, connections: CONNECTIONS, duration: context.seconds, requests });
    if (load.errors + load.non2xx > 0) throw new Error(`publishing failed: ${load.errors} errors, ${load.non2xx} non-2xx`);
    return load.requestsPerSecond;
  } finally {
    await api.stop();
  }
}

/**
 * A worker is started and waits; `count` deliveries then fall due at once (inserted in one
 * statement, the worker woken as a publish wakes it) and the rate is count / time from the
 * insert's commit until the sink has them all. What earlier publish phases left pending is delivered first, unmeasured.
 */
async function drainRate(
  environment: BenchEnvironment,
  applicationIds: number[],
  count: number,
  sink: BenchSink,
  tag: string,
): Promise<number> {
  const worker = await environment.startWorker({ HERALD_WORKER_HOST_CONCURRENCY: '64', HERALD_LOG_LEVEL: 'warn' });
  try {
    await waitForEmptyQueue(environment);
    await withClient(environment.databaseUrl, (client) => settleTables(client, ['events', 'deliveries', 'delivery_attempts']));
    sink.reset();
    await insertDueBacklog(environment.databaseUrl, applicationIds, count, tag);
    const started = performance.now();
    await environment.sql(`SELECT pg_notify($1, '')::text`, [DELIVERY_CHANNEL]);
    await sink.waitFor(count, 600_000);
    return Math.round(count / ((performance.now() - started) / 1000));
  } finally {
    await worker.stop();
  }
}

async function waitForEmptyQueue(environment: BenchEnvironment): Promise<void> {
  for (;;) {
    const [{ left }] = await environment.sql<{ left: string }>(
      `SELECT count(*) AS left FROM deliveries WHERE status IN ('pending', 'sending')`,
    );
    if (Number(left) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
