import { AppError, DEFAULT_PAGE_SIZE, EventTypeListResponse, EventTypeQuery, page } from '@herald/contracts';
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
    // A cursor is a name this list gave as next_cursor; any other word has the same shape, so
    // the name must be in the catalogue (event types are never removed, so an issued one is).
    if (query.cursor !== undefined && !(await this.eventTypes.exists(query.cursor))) {
      throw new AppError('INVALID_PARAMETER', 'cursor must be a next_cursor from a previous page (an event type name).', {
        details: [{ field: 'cursor', message: 'cursor must be a next_cursor from a previous page (an event type name)' }],
      });
    }
    const found = await this.eventTypes.list(query.limit ?? DEFAULT_PAGE_SIZE, query.cursor ?? null);
    return page(found.items, found.nextCursor);
  }
}
