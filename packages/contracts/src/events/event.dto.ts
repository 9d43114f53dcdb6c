import { EnvelopeOf } from '../common/envelope';
import { EVENT_TYPE_NAME_MAX_LENGTH } from '@herald/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FreeForm } from '../validation/free-form';
import { IsDefined, IsObject, IsString, MaxLength, MinLength, ValidateIf } from 'class-validator';

export const MAX_PAYLOAD_BYTES = 256 * 1024;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

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
