import { ok, WebhookStatusResponse } from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { Get, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { Caller, CallerOf } from '../common/audit/caller';
import { WebhookHealthService } from './webhook-health.service';

@ApplicationController('webhook', { tag: 'webhook', errors: ['WEBHOOK_NOT_CONFIGURED'] })
export class WebhookHealthController {
  constructor(private readonly health: WebhookHealthService) {}

  @Get('status')
  @ApiOperation({
    summary: 'Read the endpoint’s health',
    description:
      'Whether Herald sends to the webhook, why and since when it is disabled, its current failure streak, and while it is failing when it will be disabled unless an attempt succeeds (will_disable_at).',
  })
  @ApiOkResponse({ type: WebhookStatusResponse })
  async status(@OwnedApplication() scope: ApplicationScope): Promise<WebhookStatusResponse> {
    return ok(await this.health.status(scope));
  }

  @Post('disable')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Disable the endpoint',
    description:
      'Stops sending: pending deliveries and new events’ deliveries are paused — kept, not dropped — until the webhook is enabled. Disabling a disabled webhook changes nothing.',
  })
  @ApiOkResponse({ type: WebhookStatusResponse })
  async disable(@OwnedApplication() scope: ApplicationScope, @CallerOf() caller: Caller): Promise<WebhookStatusResponse> {
    return ok(await this.health.disable(scope, caller));
  }

  @Post('enable')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Enable the endpoint',
    description:
      'Resumes sending: every paused delivery becomes due, oldest first, each going on with the rest of its retry schedule; the failure streak starts again from zero.',
  })
  @ApiOkResponse({ type: WebhookStatusResponse })
  async enable(@OwnedApplication() scope: ApplicationScope, @CallerOf() caller: Caller): Promise<WebhookStatusResponse> {
    return ok(await this.health.enable(scope, caller));
  }
}
