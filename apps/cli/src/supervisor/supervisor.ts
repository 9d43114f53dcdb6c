import { ChildProcess, spawn } from 'node:child_process';

/** How long api and worker get to finish in-flight work after SIGTERM before they are killed. */
const SHUTDOWN_GRACE_MS = 30_000;

export interface ServiceSpec {
  name: string;
  entry: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Runs the api and the worker as child processes and ties their lives together: a signal to
 * the supervisor is passed on to both; if either exits on its own, the other is stopped too,
 * so `herald start` never leaves half of Herald running.
 */
export class Supervisor {
  private readonly children = new Map<string, ChildProcess>();
  private stopping = false;

  start(services: ServiceSpec[]): Promise<number> {
    return new Promise((resolve) => {
      let exitCode = 0;
      for (const service of services) {
        const child = spawn(process.execPath, [service.entry], { env: service.env, stdio: 'inherit' });
        this.children.set(service.name, child);
        child.on('exit', (code, signal) => {
          this.children.delete(service.name);
          if (!this.stopping) {
            console.error(`herald: ${service.name} exited (${signal ?? `code ${code}`}); stopping the rest`);
            exitCode = 1;
            void this.stop();
          }
          if (this.children.size === 0) resolve(exitCode);
        });
      }
      for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void this.stop());
    });
  }

  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const running = [...this.children.values()];
    for (const child of running) child.kill('SIGTERM');
    const killer = setTimeout(() => running.forEach((child) => child.kill('SIGKILL')), SHUTDOWN_GRACE_MS);
    await Promise.all(running.map((child) => new Promise((done) => (child.exitCode !== null ? done(null) : child.once('exit', done)))));
    clearTimeout(killer);
  }
}
