import { spawn } from 'node:child_process';
import path from 'node:path';

const RUNTIME = path.resolve(__dirname, '../../dist/index.js');

/**
 * A process that logs through createHeraldLogger, as the api and the worker do, and keeps running
 * until it is told to exit; the test reads its stdout as an operator's log collector would.
 */
function loggingProcess(service: string) {
  const script = `
    const { createHeraldLogger } = require(${JSON.stringify(RUNTIME)});
    const logger = createHeraldLogger({ log: { level: 'info' } }, { service: ${JSON.stringify(service)} });
    logger.info('started');
    process.stdin.on('data', () => { logger.info('leaving'); process.exit(0); });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  const watchers = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk;
    watchers.forEach((check) => check());
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    lines: () =>
      output
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    /** Resolves once a line has arrived. */
    written: () =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (output.length === 0) return;
          watchers.delete(check);
          resolve();
        };
        watchers.add(check);
        check();
      }),
    exit: async () => {
      child.stdin.end('exit\n');
      await exited;
    },
  };
}

describe('createHeraldLogger', () => {
  it('writes a line without waiting for more, naming the service', async () => {
    const worker = loggingProcess('herald-worker');
    await worker.written();
    expect(worker.lines()).toEqual([expect.objectContaining({ level: 30, service: 'herald-worker', msg: 'started' })]);
    await worker.exit();
  });

  it('writes the lines still pending when the process exits', async () => {
    const api = loggingProcess('herald-api');
    // 'leaving' is logged in the same turn as process.exit(): no asynchronous write could carry it.
    await api.exit();
    expect(api.lines()).toEqual([
      expect.objectContaining({ level: 30, service: 'herald-api', msg: 'started' }),
      expect.objectContaining({ level: 30, service: 'herald-api', msg: 'leaving' }),
    ]);
  });
});
