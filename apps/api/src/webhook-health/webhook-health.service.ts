import { Clock, CLOCK, ID_GENERATOR, IdGenerator } from '@herald/core';
import { Errors, WebhookStatusDto } from '@herald/contracts';
import { ApplicationScope, WebhookHealthRepository, WebhookStatusRecord } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';

@Injectable()
export class WebhookHealthService {
  constructor(
    private readonly health: WebhookHealthRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  /** Ids for the operational webhook's notice of a state change. */
  private readonly noticeIds = () => ({ eventId: this.ids.next('evt'), deliveryId: this.ids.next('dlv') });

  async status(scope: ApplicationScope): Promise<WebhookStatusDto> {
    return toDto(scope, await this.health.status(scope));
  }

  async disable(scope: ApplicationScope): Promise<WebhookStatusDto> {
    return toDto(scope, await this.health.disable(scope, 'manual', this.clock.now(), this.noticeIds));
  }

  async enable(scope: ApplicationScope): Promise<WebhookStatusDto> {
    return toDto(scope, await this.health.enable(scope, this.clock.now(), this.noticeIds));
  }
}

function toDto(scope: ApplicationScope, status: WebhookStatusRecord | null): WebhookStatusDto {
  if (!status) throw Errors.webhookNotConfigured(scope.applicationId);
  return {
    state: status.state,
    disabled_at: status.disabledAt?.toISOString() ?? null,
    disabled_reason: status.disabledReason,
    failing_since: status.failingSince?.toISOString() ?? null,
    last_success_at: status.lastSuccessAt?.toISOString() ?? null,
    consecutive_failures: Number(status.consecutiveFailures),
  };
}
