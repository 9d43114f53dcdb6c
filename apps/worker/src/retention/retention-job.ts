import { Clock, CLOCK, HERALD_CONFIG, HeraldConfig } from '@herald/core';
import { RemovedRows, RetentionRepository } from '@herald/database/queue';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkerMetrics } from '../metrics/worker-metrics';

/** How often a worker offers to run retention; only one process at a time does (an advisory lock). */
export const RETENTION_INTERVAL_MS = 10 * 60 * 1000;
/** The first pass waits this long after start, so a fleet restarting together does not start with it. */
const FIRST_PASS_DELAY_MS = 60 * 1000;
/** A pause between batches: publishing and claiming get the database between two deletes. */
const PAUSE_BETWEEN_BATCHES_MS = 10;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Removes what is older than HERALD_RETENTION_DAYS (PRODUCT.md §11): finished deliveries with
 * their attempts, then events without deliveries — never a pending or in-flight delivery, nor
 * its event. Runs in every worker on a timer; the advisory lock in RetentionRepository makes
 * the passes of a fleet take turns. A pass stops between batches when the worker shuts down.
 */
@Injectable()
export class RetentionJob implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RetentionJob.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopping = false;

  constructor(
    private readonly retention: RetentionRepository,
    private readonly metrics: WorkerMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule(FIRST_PASS_DELAY_MS);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /**
   * One pass now: everything older than the retention period goes, batch by batch. Null when
   * another process is running one (or this worker is stopping).
   */
  async runOnce(): Promise<RemovedRows | null> {
    const cutoff = new Date(this.clock.now().getTime() - this.config.retention.days * DAY_MS);
    const removed = await this.retention.removeOlderThan(cutoff, {
      afterBatch: async (batch) => {
        this.metrics.recordRetention(batch);
        if (this.stopping) throw new RetentionStopped();
        await sleep(PAUSE_BETWEEN_BATCHES_MS);
      },
    });
    if (removed && removed.deliveries + removed.events > 0) {
      this.logger.log(
        `retention removed ${removed.deliveries} deliveries (${removed.attempts} attempts) and ${removed.events} events older than ${cutoff.toISOString()}`,
      );
    }
    return removed;
  }

  private schedule(delayMs: number): void {
    if (this.stopping) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .catch((error: unknown) => {
          if (!(error instanceof RetentionStopped)) this.logger.warn(`retention pass failed (next in 10 min): ${(error as Error).message}`);
        })
        .finally(() => {
          this.running = null;
          this.schedule(RETENTION_INTERVAL_MS);
        });
    }, delayMs);
    this.timer.unref();
  }
}

/** Thrown between batches to end a pass early when the worker stops; what was removed stays removed. */
class RetentionStopped extends Error {}
