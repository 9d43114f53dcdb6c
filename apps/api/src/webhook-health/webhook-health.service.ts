import { auditChanges, Clock, CLOCK, HERALD_CONFIG, HeraldConfig, ID_GENERATOR, IdGenerator, willDisableAt } from '@herald/core';
import { Errors, WebhookStatusDto } from '@herald/contracts';
import { ApplicationScope, WebhookHealthRepository, WebhookStatusRecord } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { AuditTrail } from '../common/audit/audit-trail';
import { Caller } from '../common/audit/caller';

@Injectable()
export class WebhookHealthService {
  constructor(
    private readonly health: WebhookHealthRepository,
    private readonly audit: AuditTrail,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(HERALD_CONFIG) private readonly config: HeraldConfig,
  ) {}

  /** Ids for the operational webhook's notice of a state change. */
  private readonly noticeIds = () => ({ eventId: this.ids.next('evt'), deliveryId: this.ids.next('dlv') });

  async status(scope: ApplicationScope): Promise<WebhookStatusDto> {
    return this.toDto(scope, await this.health.status(scope));
  }

  /** Recorded as `webhook.disabled` (with no changes when it was disabled already). */
  async disable(scope: ApplicationScope, caller: Caller): Promise<WebhookStatusDto> {
    const now = this.clock.now();
    const status = await this.health.disable(scope, 'manual', now, this.noticeIds, ({ before, changed }) =>
      this.audit.entry(
        caller,
        'webhook.disabled',
        scope,
        changed ? auditChanges(stateFields(before), { state: 'disabled', disabled_at: now.toISOString(), disabled_reason: 'manual' }) : {},
      ),
    );
    return this.toDto(scope, status);
  }

  /** Recorded as `webhook.enabled`, with how many paused deliveries it resumes. */
  async enable(scope: ApplicationScope, caller: Caller): Promise<WebhookStatusDto> {
    const status = await this.health.enable(scope, this.clock.now(), this.noticeIds, ({ before, changed, pausedDeliveries }) =>
      this.audit.entry(
        caller,
        'webhook.enabled',
        scope,
        changed
          ? auditChanges(
              { ...stateFields(before), paused_deliveries: pausedDeliveries },
              { state: 'active', disabled_at: null, disabled_reason: null, paused_deliveries: 0 },
            )
          : {},
      ),
    );
    return this.toDto(scope, status);
  }

  private toDto(scope: ApplicationScope, status: WebhookStatusRecord | null): WebhookStatusDto {
    if (!status) throw Errors.webhookNotConfigured(scope.applicationId);
    return {
      state: status.state,
      disabled_at: status.disabledAt?.toISOString() ?? null,
      disabled_reason: status.disabledReason,
      failing_since: status.failingSince?.toISOString() ?? null,
      last_success_at: status.lastSuccessAt?.toISOString() ?? null,
      consecutive_failures: Number(status.consecutiveFailures),
      will_disable_at: willDisableAt(status, this.config.health.disableAfterHours)?.toISOString() ?? null,
    };
  }
}

function stateFields(status: WebhookStatusRecord): Record<string, unknown> {
  return { state: status.state, disabled_at: status.disabledAt?.toISOString() ?? null, disabled_reason: status.disabledReason };
}
