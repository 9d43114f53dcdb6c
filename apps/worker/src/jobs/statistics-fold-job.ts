import { Clock, CLOCK } from '@herald/core';
import { DeliveryQueueRepository, StatisticsFoldRepository } from '@herald/database/queue';
import { Inject, Injectable } from '@nestjs/common';
import { PeriodicJob } from './periodic-job';

/** However idle this worker, a fold at least this often: another worker may have stopped with attempts pending. */
const IDLE_FOLD_INTERVAL_MS = 60_000;

/**
 * Folds the attempts the finish statements left pending into the hourly delivery statistics
 * (PRODUCT.md §16; ARCHITECTURE.md, "Statistics"), each second this worker has finished
 * something: the hour's row of an application and event type is then updated once a second, not
 * by every finish batch. Every worker runs it; an advisory lock in the statement makes them take
 * turns (a fold that finds it taken does nothing). Reads add what is pending, so the interval is
 * about cost, never about what a read sees.
 */
@Injectable()
export class StatisticsFoldJob extends PeriodicJob {
  protected readonly firstDelayMs = 1_000;
  protected readonly intervalMs = 1_000;
  private finishesAtLastFold = -1;
  private lastFoldAt = 0;

  constructor(
    private readonly statistics: StatisticsFoldRepository,
    private readonly queue: DeliveryQueueRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    super();
  }

  /** The attempts folded; null when this worker had nothing new and folded recently. */
  async runOnce(): Promise<number | null> {
    const finishes = this.queue.finishesRecorded;
    const now = this.clock.now().getTime();
    if (finishes === this.finishesAtLastFold && now - this.lastFoldAt < IDLE_FOLD_INTERVAL_MS) return null;
    this.finishesAtLastFold = finishes;
    this.lastFoldAt = now;
    return this.statistics.foldAll();
  }
}
