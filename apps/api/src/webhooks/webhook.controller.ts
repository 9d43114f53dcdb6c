import { ok, RetryScheduleResponse, UpsertWebhookRequest, WebhookResponse, WebhookSecretResponse } from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { Body, Delete, Get, HttpCode, Post, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { ApiErrors, BODY_ERRORS } from '../common/swagger/api-errors.decorator';
import { Caller, CallerOf } from '../common/audit/caller';
import { WebhookService } from './webhook.service';

@ApplicationController('webhook', { tag: 'webhook' })
export class WebhookController {
  constructor(private readonly webhooks: WebhookService) {}

  @Put()
  @ApiOperation({ summary: 'Update webhook parameters', description: 'Creates or replaces the webhook configuration.' })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors(...BODY_ERRORS, 'URL_NOT_ALLOWED', 'HEADER_NOT_ALLOWED')
  async upsert(
    @OwnedApplication() scope: ApplicationScope,
    @Body() body: UpsertWebhookRequest,
    @CallerOf() caller: Caller,
  ): Promise<WebhookResponse> {
    return ok(await this.webhooks.upsert(scope, body, caller));
  }

  @Get()
  @ApiOperation({ summary: 'Read the webhook configuration' })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors('WEBHOOK_NOT_CONFIGURED')
  async get(@OwnedApplication() scope: ApplicationScope): Promise<WebhookResponse> {
    return ok(await this.webhooks.get(scope));
  }

  @Delete()
  @ApiOperation({
    summary: 'Delete the webhook',
    description: 'Removes the configuration, its subscriptions and secrets. Answers with what was removed.',
  })
  @ApiOkResponse({ type: WebhookResponse })
  @ApiErrors('WEBHOOK_NOT_CONFIGURED')
  async delete(@OwnedApplication() scope: ApplicationScope, @CallerOf() caller: Caller): Promise<WebhookResponse> {
    return ok(await this.webhooks.delete(scope, caller));
  }

  @Get('retry_schedule')
  @ApiOperation({
    summary: 'Preview the retry schedule',
    description: 'Every wait the stored policy will make after a failed first attempt; empty when retries are off.',
  })
  @ApiOkResponse({ type: RetryScheduleResponse })
  @ApiErrors('WEBHOOK_NOT_CONFIGURED')
  async retrySchedule(@OwnedApplication() scope: ApplicationScope): Promise<RetryScheduleResponse> {
    return ok(await this.webhooks.retrySchedule(scope));
  }

  @Get('secret')
  @ApiOperation({
    summary: 'Read the signing secret',
    description: 'The secret new signatures are made with. Each read is an audit record (webhook.secret_read).',
  })
  @ApiOkResponse({ type: WebhookSecretResponse })
  @ApiErrors('WEBHOOK_NOT_CONFIGURED')
  async secret(@OwnedApplication() scope: ApplicationScope, @CallerOf() caller: Caller): Promise<WebhookSecretResponse> {
    return ok({ secret: await this.webhooks.secret(scope, caller) });
  }

  @Post('secret/rotate')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Rotate the signing secret',
    description: 'Makes a new secret current. The previous one keeps signing (a second signature) for 24 hours.',
  })
  @ApiOkResponse({ type: WebhookSecretResponse })
  @ApiErrors('WEBHOOK_NOT_CONFIGURED')
  async rotateSecret(@OwnedApplication() scope: ApplicationScope, @CallerOf() caller: Caller): Promise<WebhookSecretResponse> {
    return ok({ secret: await this.webhooks.rotateSecret(scope, caller) });
  }
}
