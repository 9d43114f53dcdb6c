import { ok, OperationalWebhookResponse, UpsertOperationalWebhookRequest, WebhookSecretResponse } from '@herald/contracts';
import { Body, Controller, Delete, Get, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../common/auth/auth.decorators';
import { ApiErrors, AUTH_ERRORS, BODY_ERRORS } from '../common/swagger/api-errors.decorator';
import { Caller, CallerOf } from '../common/audit/caller';
import { OperationalWebhookService } from './operational-webhook.service';

/**
 * The operator's own endpoint (PRODUCT.md §10): Herald tells it when a webhook is disabled or
 * enabled and when a delivery fails for good, signed like any delivery, at least once.
 */
@ApiTags('admin')
@ApiSecurity('api-key')
@ApiErrors(...AUTH_ERRORS, 'SCOPE_REQUIRED')
@AdminOnly()
@Controller('admin/operational_webhook')
export class OperationalWebhookController {
  constructor(private readonly operational: OperationalWebhookService) {}

  @Put()
  @ApiOperation({
    summary: 'Set the operational webhook',
    description:
      'Creates or replaces the operator’s endpoint. Herald sends it `webhook.disabled`, `webhook.enabled`, `delivery.exhausted`, and the warnings `webhook.failing` and `webhook.recovered`, each with `application_id`, the ids involved and a reason, signed with its own secret (GET …/secret), with the default retry policy. The first one gets a secret; a replacement keeps it.',
  })
  @ApiOkResponse({ type: OperationalWebhookResponse })
  @ApiErrors(...BODY_ERRORS, 'URL_NOT_ALLOWED', 'HEADER_NOT_ALLOWED')
  async upsert(@Body() body: UpsertOperationalWebhookRequest, @CallerOf() caller: Caller): Promise<OperationalWebhookResponse> {
    return ok(await this.operational.upsert(body, caller));
  }

  @Get()
  @ApiOperation({ summary: 'Read the operational webhook' })
  @ApiOkResponse({ type: OperationalWebhookResponse })
  @ApiErrors('OPERATIONAL_WEBHOOK_NOT_CONFIGURED')
  async get(): Promise<OperationalWebhookResponse> {
    return ok(await this.operational.get());
  }

  @Delete()
  @ApiOperation({
    summary: 'Remove the operational webhook',
    description: 'Answers with what was removed; notices still waiting to be sent to it are cancelled, and no more are made.',
  })
  @ApiOkResponse({ type: OperationalWebhookResponse })
  @ApiErrors('OPERATIONAL_WEBHOOK_NOT_CONFIGURED')
  async delete(@CallerOf() caller: Caller): Promise<OperationalWebhookResponse> {
    return ok(await this.operational.delete(caller));
  }

  @Get('secret')
  @ApiOperation({
    summary: 'Read the operational webhook’s signing secret',
    description: 'Verify notices with it (Standard Webhooks). Each read is an audit record (operational_webhook.secret_read).',
  })
  @ApiOkResponse({ type: WebhookSecretResponse })
  @ApiErrors('OPERATIONAL_WEBHOOK_NOT_CONFIGURED')
  async secret(@CallerOf() caller: Caller): Promise<WebhookSecretResponse> {
    return ok(await this.operational.secret(caller));
  }
}
