import { ChildProcess, spawn } from 'node:child_process';
import { freePort, waitForOk as waitForUrl } from '@herald/testing';
import path from 'node:path';

export const CLI = path.resolve(__dirname, '../../dist/main.js');

export interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `herald <args>` to completion with exactly the environment given (plus PATH). */
export function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`herald ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface Running {
  child: ChildProcess;
  output(): string;
  /** Sends SIGTERM and resolves with the exit code and how long the exit took. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }>;
}

/** Starts a long-running `herald <args>`. */
export function startCli(args: string[], env: NodeJS.ProcessEnv): Running {
  const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH, ...env } });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => output,
    async stop() {
      const started = Date.now();
      if (child.exitCode === null) child.kill('SIGTERM');
      const result = await exited;
      return { ...result, ms: Date.now() - started };
    },
  };
}

export { freePort };

/** Polls a URL until it answers 200; fails at once if the cli under test has exited. */
export function waitForOk(url: string, timeoutMs: number, running?: Running): Promise<void> {
  return waitForUrl(url, timeoutMs, () =>
    running && running.child.exitCode !== null ? `the cli exited early:\n${running.output()}` : null,
  );
}

/** Calls the running api as an operator's script would; answers with the status and the JSON body. */
export async function callApi(
  base: string,
  method: string,
  path: string,
  body: object | undefined,
  key: string,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: key, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: await res.json() };
}
