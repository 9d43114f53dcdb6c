import { Clock, CLOCK, HERALD_CONFIG, HeraldConfig, ID_GENERATOR, IdGenerator } from '@herald/core';
import { WebhookHealthRepository } from '@herald/database/queue';
import { Inject, Injectable } from '@nestjs/common';
import { PeriodicJob } from './periodic-job';

/** At least this many failed attempts in the period before a webhook is disabled (PRODUCT.md §10). */
export const AUTO_DISABLE_MIN_FAILURES = 10;
const HOUR_MS = 60 * 60 * 1000;

/**
 * Disables webhooks that have done nothing but fail for HERALD_DISABLE_AFTER_HOURS with at
 * least 10 attempts (the worker keeps each webhook's failure streak as it records attempts),
 * pauses their deliveries and tells the operational webhook (`webhook.disabled`). Every worker
 * checks each minute; the UPDATE only matches active webhooks, so two workers checking at once
 * disable a webhook (and tell) once. 0 hours turns it off.
 */
@Injectable()
export class AutoDisableJob extends PeriodicJob {
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

  /** The applications whose webhook this pass disabled. */
  async runOnce(): Promise<number[]> {
    const hours = this.config.health.disableAfterHours;
    if (hours === 0) return [];
    const now = this.clock.now();
    const disabled = await this.health.disableFailing(now, new Date(now.getTime() - hours * HOUR_MS), AUTO_DISABLE_MIN_FAILURES, () => ({
      eventId: this.ids.next('evt'),
      deliveryId: this.ids.next('dlv'),
    }));
    for (const applicationId of disabled) {
      this.logger.warn(`disabled the webhook of application ${applicationId}: every attempt has failed for ${hours} hours`);
    }
    return disabled;
  }
}
