import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import { HAS_TASKSET } from './environment';
import { percentile, round } from './stats';

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
export async function getLoad(
  url: string,
  options: { connections: number; seconds: number; headers?: Record<string, string>; cpu?: number },
): Promise<LoadResult> {
  const bin = require.resolve('autocannon/autocannon.js');
  const args = [bin, '-c', String(options.connections), '-d', String(options.seconds), '--json'];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}=${value}`);
  args.push(url);
  const command =
    HAS_TASKSET && options.cpu !== undefined
      ? ['taskset', ['-c', String(options.cpu), process.execPath, ...args]]
      : [process.execPath, args];
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

/** The raw samples of a paced load, for callers that pool several phases before taking percentiles. */
export interface PacedSamples {
  latencies: number[];
  errors: number;
  non2xx: number;
  elapsedMs: number;
}

export function emptySamples(): PacedSamples {
  return { latencies: [], errors: 0, non2xx: 0, elapsedMs: 0 };
}

/** Adds `samples` to `into`: several phases pooled before their percentiles are taken. */
export function poolSamples(into: PacedSamples, samples: PacedSamples): void {
  for (const latency of samples.latencies) into.latencies.push(latency); // a spread of 100,000+ overflows the stack
  into.errors += samples.errors;
  into.non2xx += samples.non2xx;
  into.elapsedMs += samples.elapsedMs;
}

/**
 * An open-loop load at a steady rate: request i is due at start + i / rate, and its latency
 * counts from that moment, so a stall shows as the queue it causes (no coordinated omission).
 * autocannon's overallRate sends each second's quota in a burst at the start of the second,
 * which measures queueing behind its own bursts rather than the server at that rate.
 */
export async function pacedLoad(rate: number, seconds: number, send: (i: number) => Promise<number>): Promise<LoadResult> {
  return summarise(await pacedSamples(rate, seconds, send));
}

/**
 * pacedLoad's samples. With `stop`, no request falls due after it settles (`seconds` is then an
 * upper bound): the load covers exactly the life of something else, such as one long request.
 */
export async function pacedSamples(
  rate: number,
  seconds: number,
  send: (i: number) => Promise<number>,
  stop?: Promise<unknown>,
): Promise<PacedSamples> {
  const total = Math.round(rate * seconds);
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  let stopped = false;
  void stop?.then(
    () => (stopped = true),
    () => (stopped = true),
  );
  const pending: Promise<void>[] = [];
  const origin = performance.now();
  for (let i = 0; i < total && !stopped;) {
    const now = performance.now();
    for (; i < total && origin + (i * 1000) / rate <= now; i++) {
      const due = origin + (i * 1000) / rate;
      pending.push(
        send(i).then(
          (status) => {
            latencies.push(performance.now() - due);
            if (status < 200 || status >= 300) non2xx++;
          },
          () => void errors++,
        ),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(pending);
  return { latencies, errors, non2xx, elapsedMs: performance.now() - origin };
}

export function summarise(samples: PacedSamples): LoadResult {
  return {
    requestsPerSecond: Math.round(samples.latencies.length / (samples.elapsedMs / 1000)),
    p50: round(percentile(samples.latencies, 50), 1),
    p99: round(percentile(samples.latencies, 99), 1),
    errors: samples.errors,
    non2xx: samples.non2xx,
  };
}
