import { spawn } from 'node:child_process';
import path from 'node:path';

const WORKER = path.resolve(__dirname, '../../dist/main.js');

/** A real worker process, as production runs it. */
export function workerProcess(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [WORKER], {
    env: { PATH: process.env.PATH, HERALD_LOG_LEVEL: 'warn', HERALD_WORKER_METRICS_PORT: '0', ...env },
  });
  let output = '';
  const watchers = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk;
    watchers.forEach((check) => check());
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  /** Resolves once the worker has written `text`; fails, with its output, if it exits first. */
  const printed = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!output.includes(text)) return;
        watchers.delete(check);
        resolve();
      };
      watchers.add(check);
      check();
      void exit.then(({ code, signal }) => reject(new Error(`worker exited (${signal ?? code}) before printing ${text}:\n${output}`)));
    });
  return { child, exit, printed, output: () => output };
}
