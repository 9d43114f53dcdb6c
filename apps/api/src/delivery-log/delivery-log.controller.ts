import {
  DeliveryCountsQuery,
  DeliveryCountsResponse,
  DeliveryListResponse,
  DeliveryQuery,
  DeliveryRecoverResponse,
  DeliveryResponse,
  DeliveryRetryResponse,
  ok,
  page,
  RecoverDeliveriesRequest,
} from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { Body, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { ApiErrors, BODY_ERRORS } from '../common/swagger/api-errors.decorator';
import { DeliveryLogService } from './delivery-log.service';

const DELIVERY_PARAM = { name: 'delivery_id', example: 'dlv_01jd8x6q3m0000000000000000' };

@ApplicationController('deliveries', { tag: 'deliveries' })
export class DeliveryLogController {
  constructor(private readonly deliveries: DeliveryLogService) {}

  @Get()
  @ApiOperation({
    summary: 'List deliveries',
    description:
      'Newest first, filtered by status, event and creation time, paged with a cursor; each with the outcome of its latest attempt.',
  })
  @ApiOkResponse({ type: DeliveryListResponse })
  async list(@OwnedApplication() scope: ApplicationScope, @Query() query: DeliveryQuery): Promise<DeliveryListResponse> {
    const found = await this.deliveries.list(scope, query);
    return page(found.items, found.nextCursor);
  }

  // A static segment: the router matches it before ':delivery_id' (no delivery id is "counts").
  @Get('counts')
  @ApiOperation({
    summary: 'Count deliveries by status',
    description:
      'How many deliveries are in each status, with the log’s filters (event type, created in [since, until)): the status counts of a filtered log, and how many failed deliveries a recover of the same window would queue.',
  })
  @ApiOkResponse({ type: DeliveryCountsResponse })
  async counts(@OwnedApplication() scope: ApplicationScope, @Query() query: DeliveryCountsQuery): Promise<DeliveryCountsResponse> {
    return ok(await this.deliveries.counts(scope, query));
  }

  @Post('recover')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Recover failed deliveries',
    description:
      'Every `failed` delivery created in [since, until) — of one event type, if given — gets one attempt now, with no automatic follow-ups (like a manual retry). Done in batches of 1,000, each its own short transaction; concurrent recovers never queue one delivery twice. Answers once all are queued, with how many.',
  })
  @ApiAcceptedResponse({ type: DeliveryRecoverResponse })
  @ApiErrors(...BODY_ERRORS)
  async recover(@OwnedApplication() scope: ApplicationScope, @Body() body: RecoverDeliveriesRequest): Promise<DeliveryRecoverResponse> {
    return ok(await this.deliveries.recover(scope, body));
  }

  @Get(':delivery_id')
  @ApiOperation({ summary: 'Read a delivery with every attempt' })
  @ApiParam(DELIVERY_PARAM)
  @ApiOkResponse({ type: DeliveryResponse })
  @ApiErrors('DELIVERY_NOT_FOUND')
  async get(@OwnedApplication() scope: ApplicationScope, @Param('delivery_id') id: string): Promise<DeliveryResponse> {
    return ok(await this.deliveries.get(scope, id));
  }

  @Post(':delivery_id/retry')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Retry a delivery now',
    description:
      'A finished delivery gets one more attempt (no automatic follow-ups); a pending one has its next attempt brought forward. Cancelled and paused deliveries, and ones with an attempt in flight, answer 409-00.',
  })
  @ApiParam(DELIVERY_PARAM)
  @ApiAcceptedResponse({ type: DeliveryRetryResponse })
  @ApiErrors('DELIVERY_NOT_FOUND', 'CONFLICT')
  async retry(@OwnedApplication() scope: ApplicationScope, @Param('delivery_id') id: string): Promise<DeliveryRetryResponse> {
    return ok(await this.deliveries.retry(scope, id));
  }
}
