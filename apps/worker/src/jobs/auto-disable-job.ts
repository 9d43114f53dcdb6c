import {
  AUTO_DISABLE_ACTOR,
  AUTO_DISABLE_MIN_FAILURES,
  autoDisableCutoff,
  auditChanges,
  Clock,
  CLOCK,
  HERALD_CONFIG,
  HeraldConfig,
  ID_GENERATOR,
  IdGenerator,
} from '@herald/core';
import { AuditEntry, AutoDisabledWebhook, WebhookHealthRepository } from '@herald/database/queue';
import { Inject, Injectable } from '@nestjs/common';
import { PeriodicJob } from './periodic-job';

export { AUTO_DISABLE_MIN_FAILURES };

/**
 * Disables webhooks that have done nothing but fail for HERALD_DISABLE_AFTER_HOURS with at
 * least 10 attempts (the worker keeps each webhook's failure streak as it records attempts),
 * pauses their deliveries and tells the operational webhook (`webhook.disabled`); each is an
 * audit record whose actor is `system` (`auto-disable`). Every worker checks each minute; the
 * UPDATE only matches active webhooks, so two workers checking at once disable a webhook (and
 * tell, and record) once. 0 hours turns it off.
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
    const disabled = await this.health.disableFailing(
      now,
      autoDisableCutoff(now, hours),
      AUTO_DISABLE_MIN_FAILURES,
      () => ({ eventId: this.ids.next('evt'), deliveryId: this.ids.next('dlv') }),
      (webhook) => this.auditOf(webhook, now),
    );
    for (const applicationId of disabled) {
      this.logger.warn(`disabled the webhook of application ${applicationId}: every attempt has failed for ${hours} hours`);
    }
    return disabled;
  }

  private auditOf(webhook: AutoDisabledWebhook, now: Date): AuditEntry {
    return {
      id: this.ids.next('aud'),
      at: now,
      actor: AUTO_DISABLE_ACTOR,
      action: 'webhook.disabled',
      accountId: webhook.accountId,
      applicationId: webhook.applicationId,
      requestId: null,
      changes: auditChanges(
        { state: 'active', disabled_at: null, disabled_reason: null },
        { state: 'disabled', disabled_at: now.toISOString(), disabled_reason: 'failing' },
      ),
    };
  }
}
