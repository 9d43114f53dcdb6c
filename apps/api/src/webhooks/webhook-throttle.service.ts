import { Clock, CLOCK } from '@herald/core';
import { Errors, SetWebhookThrottleRequest, WebhookThrottleDto } from '@herald/contracts';
import { ApplicationScope, WebhookThrottleRepository } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';

/** A webhook's throttle (PRODUCT.md §10); the worker's claim enforces it. */
@Injectable()
export class WebhookThrottleService {
  constructor(
    private readonly throttles: WebhookThrottleRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async get(scope: ApplicationScope): Promise<WebhookThrottleDto> {
    return toDto(scope, await this.throttles.find(scope));
  }

  async set(scope: ApplicationScope, request: SetWebhookThrottleRequest): Promise<WebhookThrottleDto> {
    return toDto(scope, await this.throttles.set(scope, request.per_second, this.clock.now()));
  }
}

function toDto(scope: ApplicationScope, throttle: { perSecond: number | null } | null): WebhookThrottleDto {
  if (!throttle) throw Errors.webhookNotConfigured(scope.applicationId);
  return { per_second: throttle.perSecond };
}
