import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { applyMigrations } from '@herald/database';
import pg from 'pg';
import { request } from 'undici';
import { heraldNodeFlagsFor, nodeOptionsFlags } from '@herald/core';
import { freePort } from '@herald/testing';

export const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';
const HAS_TASKSET = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

export interface RunningProcess {
  pid: number;
  child: ChildProcess;
  output(): string;
  /** Resident set size now, in MB (from /proc). */
  rssMb(): number;
  /** SIGSTOP: frozen, it uses no CPU and sends nothing (idle polling included) until thawed. */
  freeze(): void;
  /** SIGCONT. */
  thaw(): void;
  stop(): Promise<void>;
}

/**
 * A throw-away database on the local PostgreSQL with Herald's migrations, and the api and
 * worker processes started against it exactly as production runs them (dist/main.js).
 */
export class BenchEnvironment {
  private readonly processes: RunningProcess[] = [];

  private constructor(
    readonly serverUrl: string | null,
    readonly databaseName: string,
    readonly databaseUrl: string,
  ) {}

  /** Processes against a database someone else owns (the embedded one); dispose() drops nothing. */
  static async onDatabase(databaseUrl: string): Promise<BenchEnvironment> {
    await applyMigrations(databaseUrl);
    return new BenchEnvironment(null, '', databaseUrl);
  }

  static async create(serverUrl: string): Promise<BenchEnvironment> {
    const { name, url } = await createDatabase(serverUrl);
    await applyMigrations(url);
    return new BenchEnvironment(serverUrl, name, url);
  }

  /** Starts the api; `cpu` pins it to one core (taskset) so the load generator can have the other. */
  async startApi(env: NodeJS.ProcessEnv = {}, cpu?: number): Promise<RunningProcess & { url: string }> {
    const port = await freePort();
    const started = this.spawn(require.resolve('@herald/api/dist/main.js'), { PORT: String(port), ...env }, cpu);
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(async () => (await request(`${url}/readyz`)).statusCode === 200, 30_000, started);
    return { ...started, url };
  }

  /** Logs at info (its readiness line; the worker logs nothing per attempt at that level). */
  async startWorker(env: NodeJS.ProcessEnv = {}, cpu?: number): Promise<RunningProcess> {
    const started = this.spawn(require.resolve('@herald/worker/dist/main.js'), { ...env, HERALD_LOG_LEVEL: 'info' }, cpu);
    await waitUntil(async () => started.output().includes('worker started'), 30_000, started);
    return started;
  }

  async sql<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
    return withClient(this.databaseUrl, async (client) => (await client.query<T>(text, params)).rows);
  }

  async dispose(): Promise<void> {
    for (const running of [...this.processes]) await running.stop();
    if (!this.serverUrl) return;
    await dropDatabase(this.serverUrl, this.databaseName);
  }

  private spawn(entry: string, env: NodeJS.ProcessEnv, cpu?: number): RunningProcess {
    // As `herald start` and the images run them, unless this run chose a value of its own.
    const flags = heraldNodeFlagsFor([...benchNodeArgs(), ...nodeOptionsFlags(process.env.HERALD_BENCH_NODE_OPTIONS)]);
    const [command, args] = nodeCommand(entry, cpu, flags);
    const running = startProcess(command, args, {
      PATH: process.env.PATH,
      DATABASE_URL: this.databaseUrl,
      HERALD_ADMIN_KEY: ADMIN_KEY,
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
      HERALD_LOG_LEVEL: 'info',
      // Limiting stays on, so its cost is in every figure, but far above any load a benchmark makes.
      HERALD_RATE_LIMIT_PER_SECOND: '1000000',
      HERALD_RATE_LIMIT_BURST: '1000000',
      // Several workers share this machine; their metrics are still recorded, only not served.
      HERALD_WORKER_METRICS_PORT: '0',
      ...(process.env.HERALD_BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.HERALD_BENCH_NODE_OPTIONS } : {}),
      ...env,
    });
    this.processes.push(running);
    const stop = running.stop;
    running.stop = async () => {
      await stop();
      const index = this.processes.indexOf(running);
      if (index >= 0) this.processes.splice(index, 1);
    };
    return running;
  }
}

/**
 * `node <entry>` as the bench runs every process it measures: with HERALD_BENCH_NODE_ARGS (flags
 * NODE_OPTIONS refuses, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"), pinned to `cpu` when taskset
 * exists. Herald's own processes also get `flags` (HERALD_NODE_FLAGS, as every launcher of
 * Herald's passes them); the peers' run as their own defaults have them.
 */
export function nodeCommand(entry: string, cpu?: number, flags: readonly string[] = []): [string, string[]] {
  const node = [process.execPath, ...flags, ...benchNodeArgs(), entry];
  return HAS_TASKSET && cpu !== undefined ? ['taskset', ['-c', String(cpu), ...node]] : [node[0], node.slice(1)];
}

function benchNodeArgs(): string[] {
  return process.env.HERALD_BENCH_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? [];
}

/** A child process with exactly `env`, its output kept (the last 20,000 characters) for error messages. */
export function startProcess(command: string, args: string[], env: NodeJS.ProcessEnv): RunningProcess {
  const child = spawn(command, args, { env });
  let output = '';
  child.stdout?.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
  child.stderr?.on('data', (chunk) => (output = (output + chunk).slice(-20_000)));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    pid: child.pid!,
    child,
    output: () => output,
    rssMb: () => residentMb(child.pid!),
    freeze: () => void (child.exitCode === null && child.kill('SIGSTOP')),
    thaw: () => void (child.exitCode === null && child.kill('SIGCONT')),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        // A frozen process would not act on SIGTERM until thawed.
        child.kill('SIGCONT');
        child.kill('SIGTERM');
      }
      await exited;
    },
  };
}

/** A new, empty database on the server of `serverUrl`, named herald_bench_<hex> so a leftover is recognisable. */
export async function createDatabase(serverUrl: string): Promise<{ name: string; url: string }> {
  const name = `herald_bench_${randomBytes(4).toString('hex')}`;
  await withClient(serverUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await withClient(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** The RSS of a process (under taskset the node process is the child itself: taskset execs). */
export function residentMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return Math.round(kb / 1024);
  } catch {
    return Number.NaN;
  }
}

export async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

export { freePort };

export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, running: RunningProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (running.child.exitCode !== null) throw new Error(`process exited early:\n${running.output()}`);
    try {
      if (await check()) return;
    } catch {
      // not ready yet
    }
    if (Date.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms:\n${running.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export { HAS_TASKSET };
