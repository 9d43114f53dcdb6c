// Starting and stopping the peers from the bench process: their api and worker processes, the
// private durable redis-server, and the cleanup of what they left in the shared Redis.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { benchEvent, PUBLISHERS, Publish } from '../harness/delivery-load';
import { createDatabase, dropDatabase, freePort, nodeCommand, RunningProcess, startProcess, waitUntil } from '../harness/environment';
import { HeraldClient } from '../harness/herald-client';

export interface PeerSystem {
  publishOne: Publish;
  /** Its api and worker, for the bench to freeze while other systems are measured. */
  processes: RunningProcess[];
  stop(): Promise<void>;
}

/** Where a peer keeps its jobs. */
export type PeerStore = { kind: 'bullmq'; redisPort: number } | { kind: 'pgboss'; serverUrl: string };

/**
 * A peer's api and worker processes (bench/dist/peers/<kind>-api.js, -worker.js), with a queue
 * of their own: a key prefix in Redis (deleted afterwards) or a throw-away database.
 */
export async function startPeer(store: PeerStore, webhookUrl: string, applications: number): Promise<PeerSystem> {
  const key = `peer-${randomBytes(16).toString('hex')}`;
  const prefix = `herald-bench-${randomBytes(4).toString('hex')}`;
  const database = store.kind === 'pgboss' ? await createDatabase(store.serverUrl) : null;
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    PORT: String(port),
    PEER_KEY: key,
    QUEUE: 'webhooks',
    CONCURRENCY: String(PUBLISHERS),
    WEBHOOK_URL: webhookUrl,
    WEBHOOK_SECRET: `whsec_${randomBytes(24).toString('base64')}`,
    ...(store.kind === 'bullmq' ? { REDIS_PORT: String(store.redisPort), REDIS_PREFIX: prefix } : { DATABASE_URL: database!.url }),
  };
  const processes: RunningProcess[] = [];
  const start = async (role: 'api' | 'worker', ready: string) => {
    const running = startProcess(...nodeCommand(path.join(__dirname, `${store.kind}-${role}.js`)), env);
    processes.push(running);
    await waitUntil(async () => running.output().includes(ready), 30_000, running);
  };
  const client = new HeraldClient(`http://127.0.0.1:${port}`, PUBLISHERS);
  const stop = async () => {
    await client.close();
    for (const running of processes.reverse()) await running.stop();
    if (database && store.kind === 'pgboss') await dropDatabase(store.serverUrl, database.name);
    if (store.kind === 'bullmq') await deleteKeys(store.redisPort, `${prefix}:*`);
  };
  try {
    await start('api', 'listening'); // the pg-boss api creates the schema and the queue before it listens
    await start('worker', 'worker started');
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    publishOne: async (i) => {
      const res = await client.call('POST', `/application/${1 + (i % applications)}/events`, benchEvent(i), key);
      if (res.status !== 202) throw new Error(`peer publish answered ${res.status}: ${JSON.stringify(res.body)}`);
      return [res.body.data.id as string];
    },
    processes,
    stop,
  };
}

/**
 * A redis-server of the bench's own, durable like a PostgreSQL commit: every write appended and
 * fsynced before its reply (`appendfsync always`), no snapshots, in a temporary directory removed at stop.
 */
export async function startDurableRedis(): Promise<{ port: number; stop(): Promise<void> }> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-bench-redis-'));
  const running = startProcess(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--dir', dir],
    { PATH: process.env.PATH },
  );
  const stop = async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(async () => (await ping(port)) === 'PONG', 10_000, running);
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, stop };
}

async function ping(port: number): Promise<string> {
  const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {}); // not listening yet: connect() rejects, and that is the answer
  try {
    await redis.connect();
    return await redis.ping();
  } finally {
    redis.disconnect();
  }
}

/** The shared Redis is never flushed: only the keys under this run's prefix go. */
async function deleteKeys(port: number, pattern: string): Promise<void> {
  const redis = new Redis({ host: '127.0.0.1', port });
  try {
    for await (const keys of redis.scanStream({ match: pattern, count: 1_000 })) {
      if ((keys as string[]).length > 0) await redis.unlink(...(keys as string[]));
    }
  } finally {
    redis.disconnect();
  }
}
