import { DEFAULT_PAGE_SIZE, EventTypeListResponse, EventTypeQuery, page } from '@herald/contracts';
import { EventTypeRepository } from '@herald/database';
import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors, AUTH_ERRORS } from '../common/swagger/api-errors.decorator';

@ApiTags('event types')
@ApiSecurity('api-key')
@Controller('event_types')
export class EventTypeController {
  constructor(private readonly eventTypes: EventTypeRepository) {}

  @Get()
  @ApiOperation({ summary: 'List the event types applications can subscribe to' })
  @ApiOkResponse({ type: EventTypeListResponse })
  @ApiErrors(...AUTH_ERRORS, 'INVALID_PARAMETER')
  async list(@Query() query: EventTypeQuery): Promise<EventTypeListResponse> {
    const found = await this.eventTypes.list(query.limit ?? DEFAULT_PAGE_SIZE, query.cursor ?? null);
    return page(found.items, found.nextCursor);
  }
}
