import { SubscriptionsResponse, UpsertSubscriptionRequest } from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { Body, Delete, Get, Param, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { ApiErrors, BODY_ERRORS } from '../common/swagger/api-errors.decorator';
import { Caller, CallerOf } from '../common/audit/caller';
import { SubscriptionService } from './subscription.service';

const EVENT_PARAM = { name: 'subscription', description: 'Name of the subscribed event, e.g. acw_start.' };

@ApplicationController('webhook/subscription', { tag: 'subscriptions', errors: ['WEBHOOK_NOT_CONFIGURED'] })
export class SubscriptionController {
  constructor(private readonly subscriptions: SubscriptionService) {}

  @Get()
  @ApiOperation({ summary: 'List subscriptions' })
  @ApiOkResponse({ type: SubscriptionsResponse })
  async list(@OwnedApplication() scope: ApplicationScope): Promise<SubscriptionsResponse> {
    return { success: true, subscriptions: await this.subscriptions.list(scope) };
  }

  @Put(':subscription')
  @ApiOperation({
    summary: 'Subscribe to an event, or change a subscription',
    description: 'Omitted flags default to ensure_delivery false and active true on creation, and stay as they are on update.',
  })
  @ApiParam(EVENT_PARAM)
  @ApiOkResponse({ type: SubscriptionsResponse })
  @ApiErrors(...BODY_ERRORS, 'UNKNOWN_EVENT_TYPE')
  async upsert(
    @OwnedApplication() scope: ApplicationScope,
    @Param('subscription') eventType: string,
    @Body() body: UpsertSubscriptionRequest,
    @CallerOf() caller: Caller,
  ): Promise<SubscriptionsResponse> {
    return { success: true, subscriptions: await this.subscriptions.upsert(scope, eventType, body, caller) };
  }

  @Delete(':subscription')
  @ApiOperation({ summary: 'Delete webhook subscription', description: 'Answers with the subscriptions that remain.' })
  @ApiParam(EVENT_PARAM)
  @ApiOkResponse({ type: SubscriptionsResponse })
  @ApiErrors('SUBSCRIPTION_NOT_FOUND')
  async delete(
    @OwnedApplication() scope: ApplicationScope,
    @Param('subscription') eventType: string,
    @CallerOf() caller: Caller,
  ): Promise<SubscriptionsResponse> {
    return { success: true, subscriptions: await this.subscriptions.delete(scope, eventType, caller) };
  }
}
