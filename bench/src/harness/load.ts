import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { HAS_TASKSET } from './environment';

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/**
 * GET load with autocannon's CLI in its own process, pinned to `cpu` when taskset exists, so
 * the server under test and the load generator do not share a core.
 */
export async function getLoad(url: string, options: { connections: number; seconds: number; headers?: Record<string, string>; cpu?: number }): Promise<LoadResult> {
  const bin = require.resolve('autocannon/autocannon.js');
  const args = [bin, '-c', String(options.connections), '-d', String(options.seconds), '--json'];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}=${value}`);
  args.push(url);
  const command = HAS_TASKSET && options.cpu !== undefined ? ['taskset', ['-c', String(options.cpu), process.execPath, ...args]] : [process.execPath, args];
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(command[0] as string, command[1] as string[]);
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.resume();
    child.on('exit', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`autocannon exited ${code}`))));
  });
  return fromAutocannon(JSON.parse(output));
}

/** Load with per-request paths and bodies (autocannon's API, in this process). */
export async function requestLoad(options: autocannon.Options): Promise<LoadResult> {
  const result = await autocannon({ ...options });
  return fromAutocannon(result as unknown as AutocannonJson);
}

interface AutocannonJson {
  requests: { average: number };
  latency: { p50: number; p99: number };
  errors: number;
  non2xx: number;
}

function fromAutocannon(result: AutocannonJson): LoadResult {
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}
