import { Clock, CLOCK, failingWarningCutoff, HERALD_CONFIG, HeraldConfig, ID_GENERATOR, IdGenerator, willDisableAt } from '@herald/core';
import { WebhookHealthRepository } from '@herald/database/queue';
import { Inject, Injectable } from '@nestjs/common';
import { PeriodicJob } from './periodic-job';

/**
 * Warnings before disabling (PRODUCT.md §16), for the operational webhook: `webhook.recovered`
 * when a webhook it warned about succeeded again, then `webhook.failing` once per failing streak
 * that has lasted half of HERALD_DISABLE_AFTER_HOURS. Recoveries go first, so a streak that ended
 * and a new one that began between two passes get both notices. Every worker checks each minute;
 * the mark on the webhook row, set or cleared with the notice, makes each notice go once. Off
 * with auto-disable (0 hours): nothing is ever disabled, so nothing to warn about.
 */
@Injectable()
export class EndpointWarningsJob extends PeriodicJob {
  protected readonly firstDelayMs = 5 * 1000;
  protected readonly intervalMs = 60 * 1000;

  constructor(
    private readonly health: WebhookHealthRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {
    super();
  }

  /** The applications this pass reported as recovered, and warned about. */
  async runOnce(): Promise<{ recovered: number[]; failing: number[] }> {
    const hours = this.config.health.disableAfterHours;
    if (hours === 0) return { recovered: [], failing: [] };
    const now = this.clock.now();
    const noticeIds = () => ({ eventId: this.ids.next('evt'), deliveryId: this.ids.next('dlv') });
    const recovered = await this.health.reportRecovered(now, noticeIds);
    const failing = await this.health.warnFailing(
      now,
      failingWarningCutoff(now, hours),
      (failingSince) => willDisableAt({ state: 'active', failingSince }, hours)!,
      noticeIds,
    );
    for (const applicationId of failing) {
      this.logger.warn(
        `the webhook of application ${applicationId} has failed for ${hours / 2} hours; it is disabled at ${hours} unless an attempt succeeds`,
      );
    }
    return { recovered, failing };
  }
}
