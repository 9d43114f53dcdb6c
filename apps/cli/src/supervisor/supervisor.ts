import { spawn } from 'node:child_process';
import { DEFAULT_RESTART_POLICY, NO_RESTARTS, planRestart, RestartHistory, RestartPolicy } from './restart-policy';
import { heraldNodeFlagsFor, nodeOptionsFlags } from '@herald/core';

/** How long api and worker get to finish in-flight work after SIGTERM before they are killed. */
const SHUTDOWN_GRACE_MS = 30_000;

export interface ServiceSpec {
  name: string;
  entry: string;
  env: NodeJS.ProcessEnv;
}

/** How a process ended: an exit code, a signal, or `error` when it could not be started at all. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: Error;
}

/** The little the supervisor needs of a child process; tests hand it fakes. */
export interface SupervisedProcess {
  readonly pid: number | undefined;
  kill(signal: NodeJS.Signals): void;
  /** Settles once, when the process has gone (never rejects). */
  readonly exited: Promise<Exit>;
}

export type Spawn = (service: ServiceSpec) => SupervisedProcess;

/** Time, injectable so the restart and shutdown timings are tested without waiting. */
export interface Clock {
  now(): number;
  /** Runs `callback` after `ms`; the returned function cancels it. */
  schedule(callback: () => void, ms: number): () => void;
}

export interface SupervisorOptions {
  spawn?: Spawn;
  clock?: Clock;
  policy?: RestartPolicy;
  shutdownGraceMs?: number;
  /** Where the supervisor's own one-line messages go (stderr). */
  log?: (line: string) => void;
}

/** Runs a service as `node <Herald's flags> <entry>`, sharing the supervisor's stdout and stderr. */
export const spawnNode: Spawn = (service) => {
  const flags = heraldNodeFlagsFor(nodeOptionsFlags(service.env.NODE_OPTIONS));
  const child = spawn(process.execPath, [...flags, service.entry], { env: service.env, stdio: 'inherit' });
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // 'error' also reports a failed kill of a running child; only a child that never got a pid is gone.
    child.on('error', (error) => {
      if (child.pid === undefined) resolve({ code: null, signal: null, error });
    });
  });
  return { pid: child.pid, kill: (signal) => void child.kill(signal), exited };
};

export const systemClock: Clock = {
  now: () => Date.now(),
  schedule(callback, ms) {
    const timer = setTimeout(callback, ms);
    return () => clearTimeout(timer);
  },
};

/** One supervised service: its current process (none while waiting to restart) and its history. */
interface Slot {
  readonly service: ServiceSpec;
  process: SupervisedProcess | null;
  startedAt: number;
  history: RestartHistory;
  cancelRestart: (() => void) | null;
}

/**
 * Runs the api and the worker as child processes and keeps them running (PRODUCT.md §7): one
 * that dies is restarted after a backoff (restart-policy.ts) while the other keeps serving, so
 * a crash of either costs only that process's own restart. A process dying again and again is
 * failing at start-up (a bad port, a database that refuses it): retrying forever would hide that,
 * so then everything is stopped and `run` resolves 1. A stop (a signal to `herald start`) passes
 * SIGTERM to both, waits for them, kills what is left after the grace period, and restarts nothing.
 */
export class Supervisor {
  private readonly spawn: Spawn;
  private readonly clock: Clock;
  private readonly policy: RestartPolicy;
  private readonly shutdownGraceMs: number;
  private readonly log: (line: string) => void;
  private readonly slots: Slot[] = [];
  private stopping: Promise<void> | null = null;
  private exitCode = 0;
  private finish: (code: number) => void = () => undefined;

  constructor(options: SupervisorOptions = {}) {
    this.spawn = options.spawn ?? spawnNode;
    this.clock = options.clock ?? systemClock;
    this.policy = options.policy ?? DEFAULT_RESTART_POLICY;
    this.shutdownGraceMs = options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS;
    this.log = options.log ?? ((line) => console.error(line));
  }

  /** Starts every service and resolves with the exit code once everything has stopped. */
  run(services: ServiceSpec[]): Promise<number> {
    const done = new Promise<number>((resolve) => (this.finish = resolve));
    for (const service of services) {
      const slot: Slot = { service, process: null, startedAt: 0, history: NO_RESTARTS, cancelRestart: null };
      this.slots.push(slot);
      this.launch(slot);
    }
    return done;
  }

  /** Restarts so far of the named service. */
  restarts(name: string): number {
    return this.slots.find((slot) => slot.service.name === name)?.history.restarts ?? 0;
  }

  /** Stops everything (idempotent); resolves when every process has gone. */
  stop(): Promise<void> {
    this.stopping ??= this.stopAll();
    return this.stopping;
  }

  private launch(slot: Slot): void {
    const child = this.spawn(slot.service);
    slot.process = child;
    slot.startedAt = this.clock.now();
    void child.exited.then((exit) => this.exited(slot, exit));
  }

  private exited(slot: Slot, exit: Exit): void {
    const pid = slot.process?.pid;
    slot.process = null;
    // While stopping, an exit is what was asked for; stopAll is waiting on it.
    if (this.stopping) return;

    const name = `${slot.service.name}${pid === undefined ? '' : ` (pid ${pid})`}`;
    const exitedAt = this.clock.now();
    const decision = planRestart(slot.history, { startedAt: slot.startedAt, exitedAt }, this.policy);
    slot.history = decision.history;
    if (decision.action === 'give_up') {
      const window = seconds(this.policy.failureWindowMs);
      this.log(
        `herald: ${slot.service.name} stopped ${decision.history.recentExits.length} times within ${window}` +
          ` (last: ${name} ${describeExit(exit)}); stopping Herald`,
      );
      this.exitCode = 1;
      void this.stop();
      return;
    }
    const uptime = exit.error ? '' : ` after ${seconds(exitedAt - slot.startedAt)} up`;
    this.log(
      `herald: ${name} ${describeExit(exit)}${uptime}; restarting it in ${seconds(decision.delayMs)}` +
        ` (restart ${decision.history.restarts})`,
    );
    slot.cancelRestart = this.clock.schedule(() => {
      slot.cancelRestart = null;
      this.launch(slot);
    }, decision.delayMs);
  }

  private async stopAll(): Promise<void> {
    // Nothing may come back once stopping has begun: cancel the restarts still waiting.
    for (const slot of this.slots) {
      slot.cancelRestart?.();
      slot.cancelRestart = null;
    }
    const running = this.slots.map((slot) => slot.process).filter((child): child is SupervisedProcess => child !== null);
    for (const child of running) child.kill('SIGTERM');
    const cancelKill = this.clock.schedule(() => running.forEach((child) => child.kill('SIGKILL')), this.shutdownGraceMs);
    await Promise.all(running.map((child) => child.exited));
    cancelKill();
    this.finish(this.exitCode);
  }
}

function describeExit(exit: Exit): string {
  if (exit.error) return `could not be started (${exit.error.message})`;
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code}`;
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}
