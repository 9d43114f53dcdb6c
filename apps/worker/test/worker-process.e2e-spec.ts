import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cloneDatabase, TestDatabase, testServerUrl, testTemplateDatabase } from '@herald/database/testing';

const WORKER = path.resolve(__dirname, '../dist/main.js');

function startWorker(env: NodeJS.ProcessEnv, nodeArgs: string[] = []) {
  const child = spawn(process.execPath, [...nodeArgs, WORKER], {
    env: { PATH: process.env.PATH, HERALD_WORKER_METRICS_PORT: '0', ...env },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = async (text: string, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!output.includes(text)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no "${text}" from the worker:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  return { child, exit, waitFor, output: () => output };
}

describe('the worker process', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
  });
  afterAll(() => db.drop());

  it.each(['SIGTERM', 'SIGINT'] as const)('connects, keeps running, and exits 0 soon after %s', async (signal) => {
    const worker = startWorker({ DATABASE_URL: db.url });
    await worker.waitFor('worker started', 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(worker.child.exitCode).toBeNull();
    const asked = Date.now();
    worker.child.kill(signal);
    expect(await worker.exit).toBe(0);
    expect(Date.now() - asked).toBeLessThan(5_000);
    expect(worker.output()).toContain(`worker stopping on ${signal}`);
  });

  it('loads no Prisma module from start to stop, runtime requires included (what the lint rule cannot see)', async () => {
    // Every module the process loaded, written as it exits: runtime requires included.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-worker-modules-'));
    const preload = path.join(dir, 'record-modules.js');
    const loaded = path.join(dir, 'modules.txt');
    writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(loaded)}, Object.keys(require.cache).join('\\n')));`,
    );
    try {
      const worker = startWorker({ DATABASE_URL: db.url }, ['--require', preload]);
      await worker.waitFor('worker started', 20_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      worker.child.kill('SIGTERM');
      expect(await worker.exit).toBe(0);
      const modules = readFileSync(loaded, 'utf8').split('\n');
      // The list is the real one: the delivery loop and the database package's queue entry are in it.
      expect(modules.some((file) => file.endsWith(path.join('delivery', 'delivery-loop.js')))).toBe(true);
      expect(modules.some((file) => file.endsWith(path.join('database', 'dist', 'queue.js')))).toBe(true);
      expect(modules.filter((file) => /[\\/](@prisma|prisma|generated[\\/]prisma)[\\/]/.test(file))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails start-up with a non-zero exit when the database cannot be reached', async () => {
    const unreachable = new URL(db.url);
    unreachable.port = '1';
    const worker = startWorker({ DATABASE_URL: unreachable.toString() });
    expect(await worker.exit).toBe(1);
    expect(worker.output()).toMatch(/Cannot reach the database at 127.0.0.1:1\/\S+ \(DATABASE_URL\): connect ECONNREFUSED 127.0.0.1:1/);
    expect(worker.output()).not.toMatch(/ at .*node_modules/);
  });

  it('refuses to start, naming the variable, when its metrics port is taken', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const worker = startWorker({ DATABASE_URL: db.url, HERALD_WORKER_METRICS_PORT: String(port) });
      expect(await worker.exit).toBe(1);
      expect(worker.output()).toContain(`HERALD_WORKER_METRICS_PORT: 127.0.0.1:${port} is already in use`);
      expect(worker.output()).not.toContain('worker started');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('names a bad variable and exits without connecting', async () => {
    const worker = startWorker({ DATABASE_URL: db.url, HERALD_WORKER_CONCURRENCY: 'lots' });
    expect(await worker.exit).toBe(1);
    expect(worker.output()).toMatch(/HERALD_WORKER_CONCURRENCY: must be an integer/);
  });
});
