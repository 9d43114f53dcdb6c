import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BenchContext, scaled } from '../harness/context';
import { BenchEnvironment } from '../harness/environment';
import { HeraldClient, inParallel } from '../harness/herald-client';
import { getLoad } from '../harness/load';
import { BenchResult, writeResult } from '../harness/report';
import { BenchSink } from '../harness/sink';

/** The embedded database (PGlite over a socket), for the record: what `pnpm start` gives without PostgreSQL. */
export async function embedded(context: BenchContext): Promise<BenchResult> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startEmbeddedDatabase } = require('@herald/cli/embedded') as typeof import('@herald/cli/embedded');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'herald-bench-pglite-'));
  const database = await startEmbeddedDatabase(dataDir);
  const sink = await new BenchSink().start();
  const env = { HERALD_EMBEDDED_DATABASE: '1', HERALD_DB_POOL_SIZE: '5', HERALD_LOG_LEVEL: 'warn' };
  const environment = await BenchEnvironment.onDatabase(database.url);
  try {
    const api = await environment.startApi(env);
    const client = new HeraldClient(api.url, 16);
    const { key, applicationIds } = await client.tenant(2, sink.url);
    const read = await getLoad(`${api.url}/error_codes/400-01`, {
      connections: 10,
      seconds: context.seconds,
      headers: { Authorization: key },
    });

    await environment.startWorker({ ...env, HERALD_WORKER_HOST_CONCURRENCY: '64' });
    const events = scaled(context, 1_000, 30);
    const started = performance.now();
    await inParallel([...Array(events).keys()], 16, async (i) => {
      const res = await client.call('POST', `/application/${applicationIds[i % 2]}/events`, { event: 'acw_start', payload: { i } }, key);
      if (res.status !== 202) throw new Error(`publish answered ${res.status}`);
    });
    await sink.waitFor(events, 120_000);
    const rate = events / ((performance.now() - started) / 1000);
    await client.close();
    return writeResult({
      name: 'embedded',
      description:
        'PGlite (PostgreSQL 18 in WebAssembly) behind pglite-socket, as `pnpm start` runs without DATABASE_URL; for the record, no targets',
      figures: [
        { metric: 'api read (GET /error_codes/400-01, -c 10)', value: read.requestsPerSecond, unit: 'req/s' },
        { metric: 'api read p99', value: read.p99, unit: 'ms' },
        { metric: `delivery, ${events} events publish → receipt`, value: Math.round(rate), unit: '/s' },
      ],
    });
  } finally {
    await environment.dispose();
    await database.stop();
    await sink.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
