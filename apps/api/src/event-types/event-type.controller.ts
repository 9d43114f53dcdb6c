import { EventTypeListResponse, EventTypeQuery, EventTypeResponse, ok, page } from '@herald/contracts';
import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors, AUTH_ERRORS } from '../common/swagger/api-errors.decorator';
import { EventTypeService } from './event-type.service';

@ApiTags('event types')
@ApiSecurity('api-key')
@Controller('event_types')
export class EventTypeController {
  constructor(private readonly eventTypes: EventTypeService) {}

  @Get()
  @ApiOperation({
    summary: 'List the event types applications can subscribe to',
    description: 'By name, each with its description, payload schema (and whether it is enforced) and example.',
  })
  @ApiOkResponse({ type: EventTypeListResponse })
  @ApiErrors(...AUTH_ERRORS, 'INVALID_PARAMETER')
  async list(@Query() query: EventTypeQuery): Promise<EventTypeListResponse> {
    const found = await this.eventTypes.list(query);
    return page(found.items, found.nextCursor);
  }

  @Get(':name')
  @ApiOperation({
    summary: 'Read an event type',
    description: 'Its description, payload schema, whether the schema is enforced, and example.',
  })
  @ApiParam({ name: 'name', example: 'acw_start' })
  @ApiOkResponse({ type: EventTypeResponse })
  @ApiErrors(...AUTH_ERRORS, 'EVENT_TYPE_NOT_FOUND')
  async get(@Param('name') name: string): Promise<EventTypeResponse> {
    return ok(await this.eventTypes.get(name));
  }
}
