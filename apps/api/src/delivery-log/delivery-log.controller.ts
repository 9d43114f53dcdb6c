import { DeliveryListResponse, DeliveryQuery, DeliveryResponse, DeliveryRetryResponse, ok, page } from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { ApiErrors } from '../common/swagger/api-errors.decorator';
import { DeliveryLogService } from './delivery-log.service';

const DELIVERY_PARAM = { name: 'delivery_id', example: 'dlv_01jd8x6q3m0000000000000000' };

@ApplicationController('deliveries', { tag: 'deliveries' })
export class DeliveryLogController {
  constructor(private readonly deliveries: DeliveryLogService) {}

  @Get()
  @ApiOperation({ summary: 'List deliveries', description: 'Newest first, filtered by status and event, paged with a cursor.' })
  @ApiOkResponse({ type: DeliveryListResponse })
  async list(@OwnedApplication() scope: ApplicationScope, @Query() query: DeliveryQuery): Promise<DeliveryListResponse> {
    const found = await this.deliveries.list(scope, query);
    return page(found.items, found.nextCursor);
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
      'A finished delivery gets one more attempt (no automatic follow-ups); a pending one has its next attempt brought forward. Cancelled deliveries, and ones with an attempt in flight, answer 409-00.',
  })
  @ApiParam(DELIVERY_PARAM)
  @ApiAcceptedResponse({ type: DeliveryRetryResponse })
  @ApiErrors('DELIVERY_NOT_FOUND', 'CONFLICT')
  async retry(@OwnedApplication() scope: ApplicationScope, @Param('delivery_id') id: string): Promise<DeliveryRetryResponse> {
    return ok(await this.deliveries.retry(scope, id));
  }
}
