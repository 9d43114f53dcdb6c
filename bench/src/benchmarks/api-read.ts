import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'undici';
import { BenchContext } from '../harness/context';
import { BenchEnvironment, freePort, HAS_TASKSET } from '../harness/environment';
import { HeraldClient } from '../harness/herald-client';
import { getLoad } from '../harness/load';
import { BenchResult, writeResult } from '../harness/report';
import { round } from '../harness/stats';

/** A baseline server in its own process on CPU 0, answering `body`. */
async function startServer(script: 'bare-server' | 'bare-nest-server', body: string): Promise<{ process: ChildProcess; url: string }> {
  const port = await freePort();
  const args = [require.resolve(`../harness/${script}`)];
  const env = { ...process.env, PORT: String(port), BODY: body };
  const child = HAS_TASKSET ? spawn('taskset', ['-c', '0', process.execPath, ...args], { env }) : spawn(process.execPath, args, { env });
  await once(child.stdout!, 'data');
  return { process: child, url: `http://127.0.0.1:${port}` };
}

/**
 * GET /error_codes/{code} with an account key, against bare node:http serving the same JSON;
 * and, for the record, a no-op route on the same framework (Nest + Fastify) as a floor.
 */
export async function apiRead(context: BenchContext): Promise<BenchResult> {
  const environment = await BenchEnvironment.create(context.serverUrl);
  const connections = context.quick ? 10 : 100;
  try {
    const api = await environment.startApi({}, 0);
    const client = new HeraldClient(api.url, 4);
    const { key } = await client.tenant(1, 'https://example.com/hook');
    const path = '/error_codes/400-01';
    const body = await (await request(`${api.url}${path}`, { headers: { authorization: key } })).body.text();
    await client.close();

    const bare = await startServer('bare-server', body);
    const floor = await startServer('bare-nest-server', body);

    const load = (url: string, seconds: number) => getLoad(url, { connections, seconds, headers: { Authorization: key }, cpu: 1 });
    // Warm-up: JIT and connection pools.
    for (const url of [`${api.url}${path}`, `${bare.url}/`, `${floor.url}${path}`]) await load(url, 1);
    const herald = await load(`${api.url}${path}`, context.seconds);
    const baseline = await load(`${bare.url}/`, context.seconds);
    const framework = await load(`${floor.url}${path}`, context.seconds);
    bare.process.kill('SIGTERM');
    floor.process.kill('SIGTERM');

    const ratio = herald.requestsPerSecond / baseline.requestsPerSecond;
    return writeResult({
      name: 'api-read',
      description: `GET ${path} with an account key vs bare node:http, autocannon -c ${connections} -d ${context.seconds}${HAS_TASKSET ? ', server on CPU 0, load on CPU 1' : ''}`,
      figures: [
        {
          metric: 'throughput',
          value: herald.requestsPerSecond,
          unit: 'req/s',
          baseline: { name: 'node:http', value: baseline.requestsPerSecond },
          ratio: round(ratio, 3),
          target: '>= 60% of baseline',
          pass: ratio >= 0.6,
        },
        {
          // Not a target: how much of the gap is the framework's own (a no-op Nest + Fastify route).
          metric: 'framework floor',
          value: framework.requestsPerSecond,
          unit: 'req/s',
          baseline: { name: 'node:http', value: baseline.requestsPerSecond },
          ratio: round(framework.requestsPerSecond / baseline.requestsPerSecond, 3),
        },
        {
          metric: 'herald vs floor',
          value: herald.requestsPerSecond,
          unit: 'req/s',
          baseline: { name: 'Nest+Fastify no-op', value: framework.requestsPerSecond },
          ratio: round(herald.requestsPerSecond / framework.requestsPerSecond, 3),
        },
        { metric: 'latency p50', value: herald.p50, unit: 'ms', baseline: { name: 'node:http', value: baseline.p50 } },
        { metric: 'latency p99', value: herald.p99, unit: 'ms', baseline: { name: 'node:http', value: baseline.p99 } },
        {
          metric: 'non-2xx + errors',
          value: herald.non2xx + herald.errors,
          unit: '',
          target: '0',
          pass: herald.non2xx + herald.errors === 0,
        },
      ],
    });
  } finally {
    await environment.dispose();
  }
}
