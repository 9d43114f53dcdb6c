import { BenchContext, scaled } from '../harness/context';
import { BenchEnvironment, RunningProcess } from '../harness/environment';
import { HeraldClient } from '../harness/herald-client';
import { BenchResult, writeResult } from '../harness/report';
import { insertDueBacklog } from '../harness/seed';
import { BenchSink } from '../harness/sink';
import { round } from '../harness/stats';

/** Drain rate of a backlog with one worker and with two (the scale figure). */
export async function workerScale(context: BenchContext): Promise<BenchResult> {
  const backlog = scaled(context, 10_000, 200);
  const sink = await new BenchSink().start();
  const environment = await BenchEnvironment.create(context.serverUrl);
  try {
    const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
    const client = new HeraldClient(api.url, 8);
    const { applicationIds } = await client.tenant(context.quick ? 2 : 20, sink.url);
    await client.close();
    await api.stop();

    const drain = async (workers: number, tag: string) => {
      await insertDueBacklog(environment.databaseUrl, applicationIds, backlog, tag);
      sink.reset();
      const started = performance.now();
      const running: RunningProcess[] = [];
      for (let i = 0; i < workers; i++)
        running.push(await environment.startWorker({ HERALD_WORKER_HOST_CONCURRENCY: '64', HERALD_LOG_LEVEL: 'warn' }));
      await sink.waitFor(backlog, 300_000);
      const rate = backlog / ((performance.now() - started) / 1000);
      for (const worker of running) await worker.stop();
      return rate;
    };
    const one = await drain(1, 'one');
    const two = await drain(2, 'two');
    return writeResult({
      name: 'worker-scale',
      description: `a backlog of ${backlog} due deliveries drained by one worker, then by two (start-up included); 2 cores shared with PostgreSQL`,
      figures: [
        { metric: 'one worker', value: Math.round(one), unit: 'deliveries/s' },
        {
          metric: 'two workers',
          value: Math.round(two),
          unit: 'deliveries/s',
          baseline: { name: 'one worker', value: Math.round(one) },
          ratio: round(two / one, 3),
        },
      ],
    });
  } finally {
    await environment.dispose();
    await sink.close();
  }
}

/** RSS of the api and the worker at rest and while 100,000 deliveries are pending. */
export async function memory(context: BenchContext): Promise<BenchResult> {
  const backlog = scaled(context, 100_000, 1_000);
  // A receiver that answers slowly keeps the backlog pending while the worker runs at full concurrency.
  const sink = await new BenchSink().start();
  const environment = await BenchEnvironment.create(context.serverUrl);
  try {
    const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
    const client = new HeraldClient(api.url, 16);
    const { key, applicationIds } = await client.tenant(context.quick ? 2 : 20, `${sink.url}?slow`, { retry_value: 60, max_retries: 5 });
    const worker = await environment.startWorker({ HERALD_LOG_LEVEL: 'warn' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const rest = { api: api.rssMb(), worker: worker.rssMb() };

    sink.reset(() => 503);
    await insertDueBacklog(environment.databaseUrl, applicationIds, backlog, 'mem');
    const peak = { api: rest.api, worker: rest.worker };
    const deadline = Date.now() + context.seconds * 1000;
    while (Date.now() < deadline) {
      // The api serves the delivery log meanwhile.
      await Promise.all(
        applicationIds.slice(0, 8).map((id) => client.call('GET', `/application/${id}/deliveries?limit=100`, undefined, key)),
      );
      peak.api = Math.max(peak.api, api.rssMb());
      peak.worker = Math.max(peak.worker, worker.rssMb());
    }
    const [{ pending }] = await environment.sql<{ pending: string }>(
      "SELECT count(*) AS pending FROM deliveries WHERE status IN ('pending', 'sending')",
    );
    await client.close();
    return writeResult({
      name: 'memory',
      description: `RSS at rest, and at peak over ${context.seconds} s with ${backlog} deliveries pending (receiver answering 503, worker at full concurrency, api serving the log)`,
      figures: [
        { metric: 'api at rest', value: rest.api, unit: 'MB', target: '<= 200 MB', pass: rest.api <= 200 },
        { metric: 'worker at rest', value: rest.worker, unit: 'MB', target: '<= 200 MB', pass: rest.worker <= 200 },
        { metric: 'api with backlog', value: peak.api, unit: 'MB', target: '<= 200 MB', pass: peak.api <= 200 },
        { metric: 'worker with backlog', value: peak.worker, unit: 'MB', target: '<= 200 MB', pass: peak.worker <= 200 },
        { metric: 'pending at the end', value: Number(pending), unit: 'deliveries' },
      ],
    });
  } finally {
    await environment.dispose();
    await sink.close();
  }
}
