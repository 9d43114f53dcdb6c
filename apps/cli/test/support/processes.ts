import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * The pid of the live child of `parentPid` running `<service>/dist/main.js` (the api or the
 * worker under `herald start`), found through /proc as `ps --ppid` would; null if there is none.
 */
export function childPid(parentPid: number, service: 'api' | 'worker'): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) !== parentPid || state === 'Z') continue; // a zombie is dead, just not yet reaped
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args.some((arg) => arg.endsWith(`${service}/dist/main.js`))) return Number(entry);
    } catch {
      // the process ended while we looked
    }
  }
  return null;
}

/** Waits until `condition` returns something other than null/false; polls every 50 ms. */
export async function waitUntil<T>(
  condition: () => T | null | false | Promise<T | null | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Takes a TCP port on 127.0.0.1 as soon as it is free (a killed server's port frees when the
 * kernel closes its socket), so a process restarted onto it fails at start-up for as long as the
 * test holds it. Resolves with a function that releases it.
 */
export async function holdPort(port: number, timeoutMs = 10_000): Promise<() => Promise<void>> {
  const server = await waitUntil(
    () =>
      new Promise<net.Server | null>((resolve) => {
        const attempt = net.createServer((socket) => socket.destroy());
        attempt.once('error', () => resolve(null));
        attempt.listen(port, '127.0.0.1', () => resolve(attempt));
      }),
    timeoutMs,
    `port ${port} to be free`,
  );
  return () => new Promise((resolve) => server.close(() => resolve()));
}

export interface Poll {
  at: number;
  status: number | null;
  error?: string;
}

/**
 * GETs a URL back to back (each request waits for the previous answer, at most 5 s each) until
 * stopped, recording every answer: for "this kept answering the whole time".
 */
export function pollContinuously(url: string): { stop(): Promise<Poll[]> } {
  const polls: Poll[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const at = Date.now();
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
        await res.arrayBuffer();
        polls.push({ at, status: res.status });
      } catch (error) {
        polls.push({ at, status: null, error: String((error as Error).cause ?? error) });
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return polls;
    },
  };
}

/** The pids of the api and the worker `herald start` is running now; fails if either is missing. */
export function runningChildren(parentPid: number): { apiPid: number; workerPid: number } {
  const apiPid = childPid(parentPid, 'api');
  const workerPid = childPid(parentPid, 'worker');
  if (apiPid === null || workerPid === null)
    throw new Error(`herald start (pid ${parentPid}) is not running both processes: api ${apiPid}, worker ${workerPid}`);
  return { apiPid, workerPid };
}
