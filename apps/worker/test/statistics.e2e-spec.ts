import { Sink } from '@herald/testing';
import { StatisticsFoldJob } from '../src/jobs/statistics-fold-job';
import { TestWorker } from './support/test-worker';

/**
 * PRODUCT.md §16: the worker's part of delivery statistics. Its finishes record each batch's
 * attempts as a pending row; its fold job sums them into the hourly rows, and only when it has
 * finished something since its last fold (an idle worker asks the database nothing each second).
 */
describe('delivery statistics in the worker', () => {
  let worker: TestWorker;
  let sink: Sink;

  beforeAll(async () => {
    // Every second request fails: one in two deliveries fails for good (no retries).
    sink = await new Sink((n) => ({ status: n % 2 === 0 ? 500 : 200 })).start();
    worker = await TestWorker.start();
  });
  afterAll(async () => {
    await worker.close();
    await sink.close();
  });

  it('records finished attempts as pending, and folds them into the hour of the application and event type', async () => {
    const app = await worker.application({ url: sink.url(), retryEnabled: 0 });
    const ids = [];
    for (let n = 0; n < 4; n++) ids.push((await worker.publish(app, 'acw_start', { n }))!);
    for (const id of ids) await worker.settled(app, id);

    const job = worker.inWorker(StatisticsFoldJob);
    // The job's own timer folds too (each second): fold now until nothing is pending, whoever does it.
    const deadline = Date.now() + 10_000;
    for (;;) {
      await job.runOnce();
      if ((await worker.sql('SELECT id FROM delivery_stats_pending')).length === 0) break;
      if (Date.now() > deadline) throw new Error('attempts still pending after 10 s of folds');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const rows = await worker.sql(
      `SELECT event_type, events, succeeded, failed, attempts, failed_attempts, errors, (SELECT sum(n)::int FROM unnest(latency_counts) n) AS timed
         FROM delivery_stats WHERE application_id = $1`,
      [app.applicationId],
    );
    expect(rows).toEqual([
      { event_type: 'acw_start', events: 4, succeeded: 2, failed: 2, attempts: 4, failed_attempts: 2, errors: { '5xx': 2 }, timed: 2 },
    ]);
    // Nothing finished since: an idle pass asks nothing.
    expect(await job.runOnce()).toBeNull();
  });
});
