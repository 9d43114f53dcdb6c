import { auditChanges, Clock, CLOCK } from '@herald/core';
import { Errors, SetWebhookThrottleRequest, WebhookThrottleDto } from '@herald/contracts';
import { ApplicationScope, WebhookLimits, WebhookThrottleRepository } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';
import { AuditTrail } from '../common/audit/audit-trail';
import { Caller } from '../common/audit/caller';

/** A webhook's throttle (PRODUCT.md §10); the worker's claim enforces it. */
@Injectable()
export class WebhookThrottleService {
  constructor(
    private readonly throttles: WebhookThrottleRepository,
    private readonly audit: AuditTrail,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async get(scope: ApplicationScope): Promise<WebhookThrottleDto> {
    return toDto(scope, await this.throttles.find(scope));
  }

  /** Recorded as `webhook.throttle_updated`. */
  async set(scope: ApplicationScope, request: SetWebhookThrottleRequest, caller: Caller): Promise<WebhookThrottleDto> {
    const change = { perSecond: request.per_second, maxInFlight: request.max_in_flight };
    const saved = await this.throttles.set(scope, change, this.clock.now(), ({ before, after }) =>
      this.audit.entry(caller, 'webhook.throttle_updated', scope, auditChanges({ ...toDto(scope, before) }, { ...toDto(scope, after) })),
    );
    return toDto(scope, saved);
  }
}

function toDto(scope: ApplicationScope, limits: WebhookLimits | null): WebhookThrottleDto {
  if (!limits) throw Errors.webhookNotConfigured(scope.applicationId);
  return { per_second: limits.perSecond, max_in_flight: limits.maxInFlight };
}
