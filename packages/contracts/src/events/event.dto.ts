import { ApiSuccessFlag, EnvelopeOf, PageOf } from '../common/envelope';
import { EVENT_TYPE_NAME_MAX_LENGTH, idPattern } from '@herald/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { EachWithFreeForm, FreeForm } from '../validation/free-form';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsObject,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { IsCursor, PageQuery } from '../common/pagination.dto';
import { coded } from '../validation/coded-constraint';

export const MAX_PAYLOAD_BYTES = 256 * 1024;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
export const MAX_ORDERING_KEY_LENGTH = 255;
export const MAX_BATCH_EVENTS = 1000;
/** A batch's whole body (PRODUCT.md §5.1); each payload is still held to MAX_PAYLOAD_BYTES. */
export const MAX_BATCH_BODY_BYTES = 5 * 1024 * 1024;

export class PublishEventRequest {
  @ApiProperty({ example: 'acw_start', description: 'An event type from GET /event_types.' })
  @IsDefined()
  @IsString()
  @MinLength(1)
  @MaxLength(EVENT_TYPE_NAME_MAX_LENGTH)
  event!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { agent_id: 'a-17', call_id: 'c-9001' },
    description: 'Any JSON object up to 256 KiB; delivered as `data`.',
  })
  @FreeForm()
  @IsDefined()
  @IsObject({ message: 'payload must be a JSON object' })
  payload!: Record<string, unknown>;

  @ApiPropertyOptional({
    maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
    example: 'call-c-9001-acw',
    description: 'Remembered 24 h per application: the same key and body return the first answer; another body is 400-07.',
  })
  @ValidateIf((request: PublishEventRequest) => request.idempotency_key !== undefined)
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_IDEMPOTENCY_KEY_LENGTH)
  idempotency_key?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: MAX_ORDERING_KEY_LENGTH,
    example: 'call-c-9001',
    description:
      'Events of one application with the same ordering key are delivered one at a time, in the order Herald accepted them (PRODUCT.md §13); sent to the receiver as `ordering_key`.',
  })
  @ValidateIf((request: PublishEventRequest) => request.ordering_key !== undefined)
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_ORDERING_KEY_LENGTH)
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  @Matches(/^[^\u0000-\u001f\u007f]*$/, { message: 'ordering_key must not contain control characters' })
  ordering_key?: string;
}

export class PublishedEventDto {
  @ApiProperty({ example: 'evt_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  id!: string;

  @ApiProperty({ example: 'acw_start' })
  event!: string;

  @ApiProperty({
    type: [String],
    example: ['dlv_01jd8x6q3m0000000000000000'],
    description: 'One delivery when the application has a webhook and an active subscription to the event; none otherwise.',
  })
  deliveries!: string[];
}

export class PublishedEventResponse extends EnvelopeOf(PublishedEventDto) {}

export class PublishEventBatchRequest {
  @ApiProperty({
    type: [PublishEventRequest],
    minItems: 1,
    maxItems: MAX_BATCH_EVENTS,
    description: `1 to ${MAX_BATCH_EVENTS} events, each as for a single publish; the body at most 5 MiB.`,
  })
  @IsDefined()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BATCH_EVENTS)
  @ValidateNested({ each: true })
  @Type(() => PublishEventRequest)
  @EachWithFreeForm(() => PublishEventRequest)
  events!: PublishEventRequest[];
}

export class PublishedEventBatchResponse {
  @ApiSuccessFlag(true)
  success!: true;

  @ApiProperty({ type: [PublishedEventDto], description: 'One entry per event, in the order given.' })
  data!: PublishedEventDto[];
}

/** A page of a list that can be narrowed to one event type (`?event=acw_start`). */
export class EventFilteredPageQuery extends PageQuery {
  @ApiPropertyOptional({ example: 'acw_start' })
  @ValidateIf((query: EventFilteredPageQuery) => query.event !== undefined)
  @IsString(coded({ errorKind: 'INVALID_PARAMETER' }))
  @MaxLength(EVENT_TYPE_NAME_MAX_LENGTH, coded({ errorKind: 'INVALID_PARAMETER' }))
  event?: string;
}

export class EventQuery extends EventFilteredPageQuery {
  @ApiPropertyOptional({
    example: 'call-c-9001-acw',
    maxLength: MAX_IDEMPOTENCY_KEY_LENGTH,
    description: 'Only the events published with this idempotency key (a look-up: it reads the application’s events until found).',
  })
  @ValidateIf((query: EventQuery) => query.idempotency_key !== undefined)
  @IsString(coded({ errorKind: 'INVALID_PARAMETER' }))
  @MaxLength(MAX_IDEMPOTENCY_KEY_LENGTH, coded({ errorKind: 'INVALID_PARAMETER' }))
  idempotency_key?: string;

  @IsCursor(idPattern('evt'), 'an event id')
  cursor?: string;
}

export class EventSummaryDto {
  @ApiProperty({ example: 'evt_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  id!: string;

  @ApiProperty({ example: 'acw_start' })
  event!: string;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ type: String, nullable: true, example: 'call-c-9001-acw', description: 'The idempotency key it was published with.' })
  idempotency_key!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'call-c-9001',
    description: 'The ordering key it was published with (PRODUCT.md §13).',
  })
  ordering_key!: string | null;

  @ApiProperty({
    type: [String],
    example: ['dlv_01jd8x6q3m0000000000000000'],
    description: 'Its deliveries, oldest first: the one made when it was published (if any), then one per replay.',
  })
  deliveries!: string[];
}

export class EventDto extends EventSummaryDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { agent_id: 'a-17', call_id: 'c-9001' },
    description: 'The payload as stored: what every attempt signs and sends as `data`.',
  })
  payload!: Record<string, unknown>;
}

export class EventResponse extends EnvelopeOf(EventDto) {}

export class EventListResponse extends PageOf(EventSummaryDto) {}
