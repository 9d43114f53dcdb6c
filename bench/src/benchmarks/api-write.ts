import pg from 'pg';
import { BenchContext } from '../harness/context';
import { BenchEnvironment } from '../harness/environment';
import { HeraldClient } from '../harness/herald-client';
import { LoadResult, pacedLoad, requestLoad } from '../harness/load';
import { BenchResult, writeResult } from '../harness/report';
import { percentile, round } from '../harness/stats';

const APPLICATIONS = 100;

const webhookBody = (id: number, n: number) => ({
  url: `https://hooks.example.com/${id}/${n}`,
  retry_enabled: 1,
  retry_config: { retry_value: 30, max_retries: 5, backoff_type: 'multiplier', backoff_value: 2 },
  headers: { 'X-Tenant': String(id) },
});

/**
 * PUT /application/{id}/webhook spread over 100 applications, against the database's own
 * single-row commit rate (an upsert per transaction, pgbench-style) at the same concurrency;
 * then the api's p99 at half its maximum rate.
 */
export async function apiWrite(context: BenchContext): Promise<BenchResult> {
  const environment = await BenchEnvironment.create(context.serverUrl);
  const connections = context.quick ? 4 : 32;
  try {
    const api = await environment.startApi();
    const client = new HeraldClient(api.url, 8);
    const { key, applicationIds } = await client.tenant(context.quick ? 5 : APPLICATIONS, 'https://example.com/hook');
    await client.close();

    let next = 0;
    const put = (): Promise<LoadResult> =>
      requestLoad({
        url: api.url,
        connections,
        duration: context.seconds,
        requests: [
          {
            method: 'PUT',
            headers: { authorization: key, 'content-type': 'application/json' },
            setupRequest: (req) => {
              const id = applicationIds[next++ % applicationIds.length];
              return {
                ...req,
                path: `/application/${id}/webhook`,
                body: JSON.stringify(webhookBody(id, next)),
              };
            },
          },
        ],
      });
    // Each phase starts from the same state: 100 rows updated thousands of times leave dead
    // versions behind, and a checkpoint landing inside one phase would be charged to it alone.
    const settle = async () => {
      await environment.sql('VACUUM webhooks');
      await environment.sql('CHECKPOINT');
    };
    await put(); // warm-up
    await settle();
    const herald = await put();
    await settle();
    const halfRate = Math.max(1, Math.floor(herald.requestsPerSecond / 2));
    const paced = new HeraldClient(api.url, connections);
    const halfLoad = await pacedLoad(halfRate, context.seconds, async (i) => {
      const id = applicationIds[i % applicationIds.length];
      const res = await paced.call('PUT', `/application/${id}/webhook`, webhookBody(id, i), key);
      return res.status;
    });
    await paced.close();
    await settle();
    const baseline = await singleRowCommits(environment.databaseUrl, connections, context.seconds);

    const ratio = herald.requestsPerSecond / baseline.commitsPerSecond;
    const failures = herald.non2xx + herald.errors + halfLoad.non2xx + halfLoad.errors;
    return writeResult({
      name: 'api-write',
      description: `PUT webhook over ${applicationIds.length} applications vs single-row upsert commits, both at concurrency ${connections}, ${context.seconds} s each`,
      figures: [
        {
          metric: 'throughput',
          value: herald.requestsPerSecond,
          unit: 'req/s',
          baseline: { name: 'pg single-row commits', value: baseline.commitsPerSecond },
          ratio: round(ratio, 3),
          target: '>= 40% of baseline',
          pass: ratio >= 0.4,
        },
        { metric: 'latency p50 at max', value: herald.p50, unit: 'ms', baseline: { name: 'pg commit p50', value: baseline.p50 } },
        { metric: 'latency p99 at max', value: herald.p99, unit: 'ms', baseline: { name: 'pg commit p99', value: baseline.p99 } },
        {
          metric: `latency p99 at half load (${halfLoad.requestsPerSecond} req/s)`,
          value: halfLoad.p99,
          unit: 'ms',
          target: '<= 50 ms',
          pass: halfLoad.p99 <= 50,
        },
        { metric: 'non-2xx + errors', value: failures, unit: '', target: '0', pass: failures === 0 },
      ],
    });
  } finally {
    await environment.dispose();
  }
}

/** `clients` connections, each committing one upsert per transaction as fast as it can. */
async function singleRowCommits(
  databaseUrl: string,
  clients: number,
  seconds: number,
): Promise<{ commitsPerSecond: number; p50: number; p99: number }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: clients });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_commits (id int PRIMARY KEY, body text NOT NULL)');
  const latencies: number[] = [];
  const deadline = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < deadline) {
        const started = performance.now();
        await pool.query('INSERT INTO bench_commits (id, body) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET body = excluded.body', [
          n++ % APPLICATIONS,
          `https://hooks.example.com/${n}`,
        ]);
        latencies.push(performance.now() - started);
      }
    }),
  );
  await pool.end();
  return {
    commitsPerSecond: Math.round(latencies.length / seconds),
    p50: round(percentile(latencies, 50), 2),
    p99: round(percentile(latencies, 99), 2),
  };
}
