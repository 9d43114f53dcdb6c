import { freePort, waitForOk } from '@herald/testing';
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { REPOSITORY_ROOT } from './layout';

/** One of Herald's processes, started from its built entry as the images start it. */
export interface HeraldProcess {
  name: string;
  child: ChildProcess;
  /** The api's base URL, or the worker's /metrics URL. */
  url: string;
  output(): string;
  exited: Promise<number | null>;
}

function start(name: string, entry: string, env: Record<string, string>, url: string, nodeArgs: string[]): HeraldProcess {
  const child = spawn(process.execPath, [...nodeArgs, path.join(REPOSITORY_ROOT, entry)], {
    cwd: REPOSITORY_ROOT,
    env: { PATH: process.env.PATH ?? '', HERALD_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { name, child, url, output: () => output, exited };
}

const gaveUp = (process: HeraldProcess) => () =>
  process.child.exitCode !== null || process.child.signalCode !== null ? `${process.name} exited: ${process.output()}` : null;

/** `node [nodeArgs] apps/api/dist/main.js` on a free port; resolves once /readyz answers 200. */
export async function startApi(name: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<HeraldProcess> {
  const port = await freePort();
  const api = start(name, 'apps/api/dist/main.js', { ...env, PORT: String(port), HOST: '127.0.0.1' }, `http://127.0.0.1:${port}`, nodeArgs);
  await waitForOk(`${api.url}/readyz`, 60_000, gaveUp(api));
  return api;
}

/** `node [nodeArgs] apps/worker/dist/main.js` with its /metrics on a free port; resolves once that answers. */
export async function startWorker(name: string, env: Record<string, string>, nodeArgs: string[] = []): Promise<HeraldProcess> {
  const port = await freePort();
  const worker = start(
    name,
    'apps/worker/dist/main.js',
    { ...env, HERALD_WORKER_METRICS_PORT: String(port), HOST: '127.0.0.1' },
    `http://127.0.0.1:${port}/metrics`,
    nodeArgs,
  );
  await waitForOk(worker.url, 60_000, gaveUp(worker));
  return worker;
}

/** SIGTERM, and the exit code; a process already gone answers at once. */
export async function stop(process: HeraldProcess): Promise<number | null> {
  if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill('SIGTERM');
  return process.exited;
}

/** One sample of a Prometheus series from a process's /metrics, e.g. `herald_delivery_outcomes_total{outcome="succeeded"}`; 0 when absent. */
export async function metric(url: string, series: string): Promise<number> {
  const text = await (await fetch(url)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}
