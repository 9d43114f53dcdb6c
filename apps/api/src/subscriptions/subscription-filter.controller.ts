import {
  PutSubscriptionFilterRequest,
  SubscriptionFilterResponse,
  SubscriptionFilterTestResponse,
  TestSubscriptionFilterRequest,
} from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { Body, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { ApiErrors, BODY_ERRORS } from '../common/swagger/api-errors.decorator';
import { Caller, CallerOf } from '../common/audit/caller';
import { SubscriptionFilterService } from './subscription-filter.service';

const EVENT_PARAM = { name: 'subscription', description: 'Name of the subscribed event, e.g. acw_start.' };

/** PRODUCT.md §14. The seed's subscription map is unchanged: the filter lives only on these routes. */
@ApplicationController('webhook/subscription/:subscription/filter', {
  tag: 'subscriptions',
  errors: ['WEBHOOK_NOT_CONFIGURED', 'SUBSCRIPTION_NOT_FOUND'],
})
export class SubscriptionFilterController {
  constructor(private readonly filters: SubscriptionFilterService) {}

  @Get()
  @ApiOperation({ summary: "Read a subscription's payload filter", description: '`filter` is null when the subscription has none.' })
  @ApiParam(EVENT_PARAM)
  @ApiOkResponse({ type: SubscriptionFilterResponse })
  async get(@OwnedApplication() scope: ApplicationScope, @Param('subscription') eventType: string): Promise<SubscriptionFilterResponse> {
    return { success: true, data: await this.filters.get(scope, eventType) };
  }

  @Put()
  @ApiOperation({
    summary: "Set a subscription's payload filter",
    description:
      'Events whose payload does not match get no delivery for this subscription (they are still stored). ' +
      'Every api process applies the change within a second.',
  })
  @ApiParam(EVENT_PARAM)
  @ApiOkResponse({ type: SubscriptionFilterResponse })
  @ApiErrors(...BODY_ERRORS)
  async put(
    @OwnedApplication() scope: ApplicationScope,
    @Param('subscription') eventType: string,
    @Body() body: PutSubscriptionFilterRequest,
    @CallerOf() caller: Caller,
  ): Promise<SubscriptionFilterResponse> {
    return { success: true, data: await this.filters.set(scope, eventType, body.filter, caller) };
  }

  @Delete()
  @ApiOperation({ summary: "Remove a subscription's payload filter", description: 'Every event of the type is delivered again.' })
  @ApiParam(EVENT_PARAM)
  @ApiOkResponse({ type: SubscriptionFilterResponse })
  async remove(
    @OwnedApplication() scope: ApplicationScope,
    @Param('subscription') eventType: string,
    @CallerOf() caller: Caller,
  ): Promise<SubscriptionFilterResponse> {
    return { success: true, data: await this.filters.remove(scope, eventType, caller) };
  }

  @Post('test')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Try a filter on the latest events',
    description:
      "Runs `filter` (default: the stored one) over the application's latest `limit` events of this type (default 100), " +
      'and answers how many matched and the first 20 matching ids, newest first. Stores nothing.',
  })
  @ApiParam(EVENT_PARAM)
  @ApiOkResponse({ type: SubscriptionFilterTestResponse })
  @ApiErrors(...BODY_ERRORS)
  async test(
    @OwnedApplication() scope: ApplicationScope,
    @Param('subscription') eventType: string,
    @Body() body: TestSubscriptionFilterRequest,
  ): Promise<SubscriptionFilterTestResponse> {
    return { success: true, data: await this.filters.test(scope, eventType, body) };
  }
}
