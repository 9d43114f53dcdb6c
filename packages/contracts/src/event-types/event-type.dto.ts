import { EnvelopeOf, PageOf } from '../common/envelope';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { EVENT_TYPE_NAME_MAX_LENGTH, EVENT_TYPE_NAME_PATTERN } from '@herald/core';
import { IsCursor, PageQuery } from '../common/pagination.dto';
import { IsDefined, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';

export const EVENT_TYPE_DESCRIPTION_MAX_LENGTH = 1000;

export class EventTypeQuery extends PageQuery {
  @IsCursor(EVENT_TYPE_NAME_PATTERN, 'an event type name')
  cursor?: string;
}

export class CreateEventTypeRequest {
  @ApiProperty({ pattern: EVENT_TYPE_NAME_PATTERN.source, example: 'call_recording_ready' })
  @IsDefined()
  @IsString()
  @Matches(EVENT_TYPE_NAME_PATTERN, { message: `name must be 1 to ${EVENT_TYPE_NAME_MAX_LENGTH} of a-z, 0-9, "_" and "."` })
  name!: string;

  @ApiPropertyOptional({ maxLength: EVENT_TYPE_DESCRIPTION_MAX_LENGTH, example: 'A call recording can be downloaded.' })
  @ValidateIf((request: CreateEventTypeRequest) => request.description !== undefined)
  @IsString()
  @MaxLength(EVENT_TYPE_DESCRIPTION_MAX_LENGTH)
  description?: string;
}

export class EventTypeDto {
  @ApiProperty({ example: 'acw_start' })
  name!: string;

  @ApiProperty({ example: 'An agent entered after-call work.' })
  description!: string;
}

export class EventTypeResponse extends EnvelopeOf(EventTypeDto) {}

export class EventTypeListResponse extends PageOf(EventTypeDto) {}
