import { BenchContext, scaled } from '../harness/context';
import { BenchEnvironment, withClient } from '../harness/environment';
import { HeraldClient } from '../harness/herald-client';
import { HalfRatePublisher } from '../harness/half-rate-publisher';
import { emptySamples, pacedSamples, poolSamples, summarise } from '../harness/load';
import { BenchResult, writeResult } from '../harness/report';
import { assertHeraldIds, seedDeliveries, seedEvents, settleTables } from '../harness/seed';
import { BenchSink } from '../harness/sink';
import { percentile, round } from '../harness/stats';

const HOUR_MS = 3_600_000;

/**
 * POST /application/{id}/deliveries/recover over 100,000 failed deliveries (seeded in SQL):
 * the time until it answers with every one requeued, and the publish p99 of a paced open-loop
 * publisher (half the api's maximum publish rate, measured first) while it runs, against the
 * same publisher with nothing else running. No worker runs: the figure is the requeue itself
 * (and what it does to publishing), not the delivery of 100,000 webhooks on the same two cores.
 * The recover runs `rounds` times, the deliveries set back to failed in SQL between rounds, so
 * the "during" samples cover more than one short call; each round starts with an idle phase, so
 * the idle samples are spread over the same minutes as the others. Baseline: the same requeue as a single
 * UPDATE on a bare pg client, which locks every row for the whole statement.
 */
export async function recover(context: BenchContext): Promise<BenchResult> {
  const failed = scaled(context, 100_000, 2_000);
  const rounds = context.quick ? 1 : 3;
  // The webhook points at a local sink even though no worker runs: nothing could ever leave 127.0.0.1.
  const sink = await new BenchSink().start();
  const environment = await BenchEnvironment.create(context.serverUrl);
  try {
    const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
    const admin = new HeraldClient(api.url, 4);
    const {
      key,
      applicationIds: [applicationId],
    } = await admin.tenant(1, sink.url);

    // The failures of the last day, one every 864 ms (at full size), as after a receiver outage.
    const stepMs = Math.floor((24 * HOUR_MS) / failed);
    const fromMs = Date.now() - 60_000 - failed * stepMs;
    await withClient(environment.databaseUrl, async (client) => {
      await seedEvents(client, { applicationId, count: failed, fromMs, stepMs, tag: 'recover' });
      await seedDeliveries(client, { applicationId, status: 'failed', attemptCount: 6 });
      await assertHeraldIds(client, 'events', 'evt');
      await assertHeraldIds(client, 'deliveries', 'dlv');
    });
    const settle = () => withClient(environment.databaseUrl, (client) => settleTables(client, ['events', 'deliveries']));
    await settle();
    const since = new Date(fromMs - 60_000).toISOString();

    // Publishing into the application whose failures are recovered, as when its receiver comes back.
    const publisher = await HalfRatePublisher.measure(api.url, key, applicationId, context.seconds);
    const { rate, publish } = publisher;

    const recoverer = new HeraldClient(api.url, 1);
    const idle = emptySamples();
    const during = emptySamples();
    const wallTimes: number[] = [];
    for (let n = 0; n < rounds; n++) {
      if (n > 0) await setFailedAgain(environment, applicationId, failed);
      // An idle phase before each recover, so both sides see the same drift of a shared machine.
      await settle();
      poolSamples(idle, await pacedSamples(rate, context.seconds / rounds, publish));
      await settle();
      const started = performance.now();
      const recovering = recoverer.call('POST', `/application/${applicationId}/deliveries/recover`, { since }, key).then((res) => {
        wallTimes.push(performance.now() - started);
        return res;
      });
      // At most ten minutes of publishing; it stops when the recover answers.
      const samples = await pacedSamples(rate, 600, publish, recovering);
      const res = await recovering;
      if (res.status !== 202 || res.body?.data?.requeued !== failed) {
        throw new Error(`recover answered ${res.status} ${JSON.stringify(res.body)}; expected 202 with requeued = ${failed}`);
      }
      poolSamples(during, samples);
    }
    await Promise.all([publisher.close(), recoverer.close(), admin.close()]);
    const [{ requeued }] = await environment.sql<{ requeued: string }>(
      `SELECT count(*) AS requeued FROM deliveries WHERE application_id = $1 AND status = 'pending' AND manual_attempt`,
      [applicationId],
    );
    if (Number(requeued) !== failed) throw new Error(`${requeued} deliveries pending after recover; expected ${failed}`);

    await setFailedAgain(environment, applicationId, failed);
    await settle();
    const bare = await bareRequeue(environment, applicationId, since);
    if (bare.rows !== failed) throw new Error(`the bare UPDATE requeued ${bare.rows}; expected ${failed}`);

    const idleLoad = summarise(idle);
    const duringLoad = summarise(during);
    const wall = percentile(wallTimes, 50);
    const rateOf = (ms: number) => Math.round(failed / (ms / 1000));
    const slowdown = duringLoad.p99 / idleLoad.p99;
    const failures = idleLoad.errors + idleLoad.non2xx + duringLoad.errors + duringLoad.non2xx;
    return writeResult({
      name: 'recover',
      description: `POST …/deliveries/recover over ${failed} failed deliveries of one application (seeded in SQL; no worker running), ${rounds} round(s); meanwhile ${publisher.description}, against the same rate with nothing else running (${context.seconds} s in all, ${rounds} phases, one before each recover)`,
      figures: [
        { metric: 'requeued per call', value: failed, unit: 'deliveries', target: `${failed} (asserted)`, pass: true },
        { metric: `recover wall time (median of ${rounds})`, value: round(wall / 1000, 2), unit: 's' },
        {
          metric: 'recover rate',
          value: rateOf(wall),
          unit: 'deliveries/s',
          baseline: { name: 'one bare UPDATE', value: rateOf(bare.ms) },
          ratio: round(rateOf(wall) / rateOf(bare.ms), 3),
        },
        { metric: 'publish p50 idle', value: idleLoad.p50, unit: 'ms' },
        { metric: 'publish p50 during recover', value: duringLoad.p50, unit: 'ms', baseline: { name: 'idle', value: idleLoad.p50 } },
        { metric: 'publish p99 idle', value: idleLoad.p99, unit: 'ms' },
        {
          metric: 'publish p99 during recover',
          value: duringLoad.p99,
          unit: 'ms',
          baseline: { name: 'idle p99', value: idleLoad.p99 },
          ratio: round(slowdown, 2),
          target: '<= 2x idle',
          pass: slowdown <= 2,
        },
        { metric: 'publishes measured idle', value: idle.latencies.length, unit: '' },
        { metric: 'publishes measured during recover', value: during.latencies.length, unit: '' },
        { metric: 'non-2xx + errors', value: failures, unit: '', target: '0', pass: failures === 0 },
      ],
      notes: [
        `recover wall times: ${wallTimes.map((ms) => `${round(ms / 1000, 2)} s`).join(', ')}; one bare UPDATE of the same rows: ${round(bare.ms / 1000, 2)} s`,
        'no worker runs during the measurement: the figure is the requeue itself (batches of 1,000, each its own transaction)',
      ],
    });
  } finally {
    await environment.dispose();
    await sink.close();
  }
}
/** Puts the seeded deliveries back as they were before a recover (the published ones stay pending). */
async function setFailedAgain(environment: BenchEnvironment, applicationId: number, failed: number): Promise<void> {
  const rows = await withClient(environment.databaseUrl, async (client) => {
    const result = await client.query(
      `WITH failed AS (
         UPDATE deliveries SET status = 'failed', next_attempt_at = NULL, manual_attempt = false, updated_at = created_at + interval '31 minutes'
          WHERE application_id = $1 AND manual_attempt
         RETURNING id
       ), dequeued AS (
         DELETE FROM delivery_queue q USING failed WHERE q.delivery_id = failed.id
       )
       SELECT id FROM failed`,
      [applicationId],
    );
    return result.rowCount;
  });
  if (rows !== failed) throw new Error(`set ${rows} deliveries back to failed; expected ${failed}`);
}

/** The same rows requeued by one statement on a bare pg client: the database's own speed for this work. */
async function bareRequeue(environment: BenchEnvironment, applicationId: number, since: string): Promise<{ ms: number; rows: number }> {
  return withClient(environment.databaseUrl, async (client) => {
    const started = performance.now();
    const result = await client.query(
      `WITH requeued AS (
         UPDATE deliveries SET status = 'pending', next_attempt_at = now(), updated_at = now(), manual_attempt = true
          WHERE application_id = $1 AND status = 'failed' AND created_at >= $2 AND created_at < now()
         RETURNING id, application_id
       )
       INSERT INTO delivery_queue (delivery_id, application_id, due_at) SELECT id, application_id, now() FROM requeued`,
      [applicationId, since],
    );
    return { ms: performance.now() - started, rows: result.rowCount ?? 0 };
  });
}
