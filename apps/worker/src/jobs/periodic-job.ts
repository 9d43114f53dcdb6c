import { BeforeApplicationShutdown, Logger, OnApplicationBootstrap } from '@nestjs/common';

/** Thrown by a job between two steps to end its pass early when the worker stops. */
export class JobStopped extends Error {}

/**
 * Housekeeping a worker does on a timer, beside delivering (retention, auto-disable): a first
 * pass `firstDelayMs` after start — so a fleet restarting together does not start with it — then
 * one every `intervalMs`, never two at once. On shutdown the timer stops and a pass in progress
 * is awaited; a pass checks `stopping` between its steps (`JobStopped` ends it quietly).
 */
export abstract class PeriodicJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  protected readonly logger = new Logger(this.constructor.name);
  protected stopping = false;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  protected abstract readonly firstDelayMs: number;
  protected abstract readonly intervalMs: number;

  /** One pass now; what it returns is for tests and logs. */
  abstract runOnce(): Promise<unknown>;

  onApplicationBootstrap(): void {
    this.schedule(this.firstDelayMs);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .catch((error: unknown) => {
          if (!(error instanceof JobStopped))
            this.logger.warn(`pass failed (the next one is due in ${this.intervalMs / 1000} s): ${(error as Error).message}`);
        })
        .finally(() => {
          this.running = null;
          this.schedule(this.intervalMs);
        });
    }, delayMs);
    this.timer.unref();
  }
}
