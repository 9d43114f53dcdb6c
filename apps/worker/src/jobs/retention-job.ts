import { Clock, CLOCK, HERALD_CONFIG, HeraldConfig, STATISTICS_RETENTION_DAYS } from '@herald/core';
import { RemovedRows, RetentionRepository } from '@herald/database/queue';
import { Inject, Injectable } from '@nestjs/common';
import { WorkerMetrics } from '../metrics/worker-metrics';
import { JobStopped, PeriodicJob } from './periodic-job';

/** How often a worker offers to run retention; only one process at a time does (an advisory lock). */
export const RETENTION_INTERVAL_MS = 10 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Removes what is older than HERALD_RETENTION_DAYS (PRODUCT.md §11): finished deliveries with
 * their attempts, then events without deliveries, then portal links that stopped working —
 * never a pending, paused or in-flight delivery, nor its event; audit records older than
 * HERALD_AUDIT_RETENTION_DAYS and hours of delivery statistics older than 400 days (§16). Runs in every worker; the advisory lock in RetentionRepository makes
 * the passes of a fleet take turns.
 */
@Injectable()
export class RetentionJob extends PeriodicJob {
  protected readonly firstDelayMs = 60 * 1000;
  protected readonly intervalMs = RETENTION_INTERVAL_MS;

  constructor(
    private readonly retention: RetentionRepository,
    private readonly metrics: WorkerMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
  ) {
    super();
  }

  /** One pass now, batch by batch. Null when another process is running one. */
  async runOnce(): Promise<RemovedRows | null> {
    const now = this.clock.now().getTime();
    const cutoff = new Date(now - this.config.retention.days * DAY_MS);
    const auditCutoff = new Date(now - this.config.retention.auditDays * DAY_MS);
    const statisticsCutoff = new Date(now - STATISTICS_RETENTION_DAYS * DAY_MS);
    const removed = await this.retention.removeOlderThan(cutoff, {
      auditCutoff,
      statisticsCutoff,
      afterBatch: (batch) => {
        this.metrics.recordRetention(batch);
        if (this.stopping) throw new JobStopped();
      },
    });
    if (removed && removed.deliveries + removed.events + removed.portalLinks > 0) {
      this.logger.log(
        `removed ${removed.deliveries} deliveries (${removed.attempts} attempts), ${removed.events} events and ${removed.portalLinks} portal links older than ${cutoff.toISOString()}`,
      );
    }
    if (removed && removed.auditRecords > 0) {
      this.logger.log(`removed ${removed.auditRecords} audit records older than ${auditCutoff.toISOString()}`);
    }
    if (removed && removed.statistics > 0) {
      this.logger.log(`removed ${removed.statistics} hours of delivery statistics older than ${statisticsCutoff.toISOString()}`);
    }
    return removed;
  }
}
