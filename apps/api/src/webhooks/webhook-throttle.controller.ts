import { ok, SetWebhookThrottleRequest, WebhookThrottleResponse } from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { Body, Get, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { ApiErrors, BODY_ERRORS } from '../common/swagger/api-errors.decorator';
import { Caller, CallerOf } from '../common/audit/caller';
import { WebhookThrottleService } from './webhook-throttle.service';

/** PUT/GET …/webhook/throttle (PRODUCT.md §10): its own controller beside the configuration's, on the same path. */
@ApplicationController('webhook/throttle', { tag: 'webhook', errors: ['WEBHOOK_NOT_CONFIGURED'] })
export class WebhookThrottleController {
  constructor(private readonly throttles: WebhookThrottleService) {}

  @Put()
  @ApiOperation({
    summary: 'Throttle the webhook',
    description:
      'At most per_second attempts (1 to 10000) reach the webhook in any second, however many workers run; deliveries over ' +
      'the limit wait for a slot and never fail because of it. null removes the throttle. Deliveries already waiting take ' +
      'a slot under the new setting.',
  })
  @ApiOkResponse({ type: WebhookThrottleResponse })
  @ApiErrors(...BODY_ERRORS)
  async set(
    @OwnedApplication() scope: ApplicationScope,
    @Body() body: SetWebhookThrottleRequest,
    @CallerOf() caller: Caller,
  ): Promise<WebhookThrottleResponse> {
    return ok(await this.throttles.set(scope, body, caller));
  }

  @Get()
  @ApiOperation({ summary: 'Read the webhook’s throttle', description: 'per_second is null when the webhook is not throttled.' })
  @ApiOkResponse({ type: WebhookThrottleResponse })
  async get(@OwnedApplication() scope: ApplicationScope): Promise<WebhookThrottleResponse> {
    return ok(await this.throttles.get(scope));
  }
}
