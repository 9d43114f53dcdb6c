import { PgPool, RemovedRows, RetentionRepository } from '@herald/database/queue';
import { BenchContext, scaled } from '../harness/context';
import { BenchEnvironment, withClient } from '../harness/environment';
import { HeraldClient } from '../harness/herald-client';
import { HalfRatePublisher } from '../harness/half-rate-publisher';
import { emptySamples, pacedSamples, poolSamples, summarise } from '../harness/load';
import { BenchResult, writeResult } from '../harness/report';
import { seedAttempts, seedDeliveries, seedEvents, settleTables } from '../harness/seed';
import { BenchSink } from '../harness/sink';
import { round } from '../harness/stats';

const DAY_MS = 24 * 3_600_000;
const RETENTION_DAYS = 30;

/**
 * Publishing while retention removes a day of history (issue 11, PRODUCT.md §11): `rounds` days
 * past the retention window are seeded in SQL (per day ≥ 300,000 finished deliveries, their
 * events and two attempts each), and each round runs one retention pass whose cutoff takes one
 * more day — through RetentionRepository, the statements, batch size and pacing the worker's
 * RetentionJob uses — while a paced open-loop publisher (half the api's maximum publish rate,
 * measured first) records every publish's latency. Each round starts with an idle phase of the
 * same publisher, as long as the pass before it, so both sides see the same drift of the machine
 * over windows of the same length. No worker runs.
 */
export async function retention(context: BenchContext): Promise<BenchResult> {
  const perDay = scaled(context, 300_000, 3_000);
  const rounds = context.quick ? 1 : 3;
  const sink = await new BenchSink().start();
  const environment = await BenchEnvironment.create(context.serverUrl);
  const pool = new PgPool({ url: environment.databaseUrl, poolSize: 2 });
  try {
    const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
    const admin = new HeraldClient(api.url, 4);
    const {
      key,
      applicationIds: [applicationId],
    } = await admin.tenant(1, sink.url);

    // Day d (1…rounds) before the window: its deliveries finished 31 minutes after creation, all
    // of them past the cutoff of round d and none past that of round d - 1.
    const windowStart = Date.now() - RETENTION_DAYS * DAY_MS;
    const dayStart = (d: number) => windowStart - (rounds - d + 1) * DAY_MS;
    const seedStarted = performance.now();
    await withClient(environment.databaseUrl, async (client) => {
      for (let d = 1; d <= rounds; d++) {
        await seedEvents(client, {
          applicationId,
          count: perDay,
          fromMs: dayStart(d),
          stepMs: Math.floor((DAY_MS - 3_600_000) / perDay),
          tag: `day${d}`,
        });
      }
      await seedDeliveries(client, { applicationId, status: 'succeeded', attemptCount: 2 });
      await seedAttempts(client, { applicationId, number: 2 });
    });
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const settle = () =>
      withClient(environment.databaseUrl, (client) => settleTables(client, ['events', 'deliveries', 'delivery_attempts']));
    await settle();

    const publisher = await HalfRatePublisher.measure(api.url, key, applicationId, context.seconds);
    const { rate, publish } = publisher;

    const repository = new RetentionRepository(pool);
    const idle = emptySamples();
    const during = emptySamples();
    const passes: { removed: RemovedRows; ms: number }[] = [];
    for (let d = 1; d <= rounds; d++) {
      await settle();
      // As long as the pass before it (the first: the run's phase length): a p99 over a short
      // window misses the rare stalls (a checkpoint, autovacuum) a long one catches either way.
      const idleSeconds = passes.length > 0 ? passes[passes.length - 1].ms / 1000 : context.seconds;
      poolSamples(idle, await pacedSamples(rate, idleSeconds, publish));
      await settle();
      const started = performance.now();
      const cutoff = new Date(dayStart(d) + DAY_MS);
      const removing = repository.removeOlderThan(cutoff).then((removed) => {
        if (!removed) throw new Error('the retention lock was held by someone else');
        passes.push({ removed, ms: performance.now() - started });
      });
      // Publishing for as long as the pass runs (at most ten minutes).
      poolSamples(during, await pacedSamples(rate, 600, publish, removing));
      await removing;
    }
    await Promise.all([publisher.close(), admin.close()]);

    const [left] = await environment.sql<{ deliveries: string; events: string; attempts: string }>(
      `SELECT (SELECT count(*) FROM deliveries WHERE created_at < $1) AS deliveries,
              (SELECT count(*) FROM events WHERE created_at < $1) AS events,
              (SELECT count(*) FROM delivery_attempts WHERE started_at < $1) AS attempts`,
      [new Date(windowStart)],
    );
    const removedDeliveries = passes.reduce((sum, pass) => sum + pass.removed.deliveries, 0);
    if (removedDeliveries !== perDay * rounds || Number(left.deliveries) + Number(left.events) + Number(left.attempts) > 0) {
      throw new Error(
        `retention removed ${removedDeliveries} of ${perDay * rounds} deliveries; left before the window: ${JSON.stringify(left)}`,
      );
    }
    const [{ published }] = await environment.sql<{ published: string }>(
      `SELECT count(*) AS published FROM deliveries WHERE status = 'pending'`,
    );

    const idleLoad = summarise(idle);
    const duringLoad = summarise(during);
    const slowdown = duringLoad.p99 / idleLoad.p99;
    const failures = idleLoad.errors + idleLoad.non2xx + duringLoad.errors + duringLoad.non2xx;
    const perPass = (pass: { removed: RemovedRows; ms: number }) =>
      `${pass.removed.deliveries} deliveries, ${pass.removed.attempts} attempts, ${pass.removed.events} events in ${round(pass.ms / 1000, 1)} s`;
    return writeResult({
      name: 'retention',
      description: `a retention pass (RetentionRepository, as the worker runs it) removing one day of history — ${perDay} finished deliveries, ${perDay * 2} attempts, ${perDay} events — ${rounds} time(s); meanwhile ${publisher.description}, against the same rate with nothing else running`,
      figures: [
        {
          metric: 'rows removed per pass',
          value: perDay * 4,
          unit: 'rows',
          target: 'all of the day (asserted), nothing newer',
          pass: true,
        },
        {
          metric: 'pass wall time (mean)',
          value: round(passes.reduce((sum, pass) => sum + pass.ms, 0) / passes.length / 1000, 1),
          unit: 's',
        },
        { metric: 'publish p50 idle', value: idleLoad.p50, unit: 'ms' },
        { metric: 'publish p50 during retention', value: duringLoad.p50, unit: 'ms', baseline: { name: 'idle', value: idleLoad.p50 } },
        { metric: 'publish p99 idle', value: idleLoad.p99, unit: 'ms' },
        {
          metric: 'publish p99 during retention',
          value: duringLoad.p99,
          unit: 'ms',
          baseline: { name: 'idle p99', value: idleLoad.p99 },
          ratio: round(slowdown, 2),
          target: '<= 2x idle',
          pass: slowdown <= 2,
        },
        { metric: 'publishes measured idle / during', value: idle.latencies.length, unit: `/ ${during.latencies.length}` },
        { metric: 'non-2xx + errors', value: failures, unit: '', target: '0', pass: failures === 0 },
      ],
      notes: [
        `passes: ${passes.map(perPass).join('; ')}`,
        `published deliveries left pending (never removed): ${published}`,
        `history written in ${round(seedSeconds, 0)} s`,
      ],
    });
  } finally {
    await pool.onApplicationShutdown();
    await environment.dispose();
    await sink.close();
  }
}
