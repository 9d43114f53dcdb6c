import { EnvelopeOf, PageOf } from '../common/envelope';
import { ATTEMPT_ERRORS, DELIVERY_STATUSES, DeliveryStatus, EVENT_TYPE_NAME_MAX_LENGTH, idPattern } from '@herald/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, MaxLength, ValidateIf } from 'class-validator';
import { IsCursor, PageQuery } from '../common/pagination.dto';
import { coded } from '../validation/coded-constraint';

export class DeliveryQuery extends PageQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @ValidateIf((query: DeliveryQuery) => query.status !== undefined)
  @IsIn(DELIVERY_STATUSES, {
    ...coded({ errorKind: 'INVALID_PARAMETER' }),
    message: `status must be one of ${DELIVERY_STATUSES.join(', ')}`,
  })
  status?: DeliveryStatus;

  @ApiPropertyOptional({ example: 'acw_start' })
  @ValidateIf((query: DeliveryQuery) => query.event !== undefined)
  @IsString(coded({ errorKind: 'INVALID_PARAMETER' }))
  @MaxLength(EVENT_TYPE_NAME_MAX_LENGTH, coded({ errorKind: 'INVALID_PARAMETER' }))
  event?: string;

  @IsCursor(idPattern('dlv'), 'a delivery id')
  cursor?: string;
}

export class DeliveryAttemptDto {
  @ApiProperty({ example: 1 })
  number!: number;

  @ApiProperty({ format: 'date-time' })
  started_at!: string;

  @ApiProperty({ example: 42 })
  duration_ms!: number;

  @ApiProperty({ example: 'https://example.com/hooks/herald', description: 'The URL this attempt used.' })
  url!: string;

  @ApiProperty({ type: Number, nullable: true, example: 503 })
  response_status!: number | null;

  @ApiProperty({ type: String, nullable: true, description: 'The first 4 KiB of the answer.' })
  response_excerpt!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    enum: ATTEMPT_ERRORS,
    description: 'Why no answer came; null when the receiver answered.',
  })
  error!: string | null;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', description: 'When the next attempt is due; null if none follows.' })
  next_attempt_at!: string | null;
}

export class DeliverySummaryDto {
  @ApiProperty({ example: 'dlv_01jd8x6q3m0000000000000000' })
  id!: string;

  @ApiProperty({ example: 'evt_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  event_id!: string;

  @ApiProperty({ example: 'acw_start' })
  event!: string;

  @ApiProperty({ enum: DELIVERY_STATUSES })
  status!: DeliveryStatus;

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ example: 2 })
  attempt_count!: number;

  @ApiProperty({ type: String, nullable: true, format: 'date-time' })
  next_attempt_at!: string | null;
}

export class DeliveryDto extends DeliverySummaryDto {
  @ApiProperty({ type: [DeliveryAttemptDto] })
  attempts!: DeliveryAttemptDto[];
}

export class DeliveryResponse extends EnvelopeOf(DeliveryDto) {}

export class DeliveryRetryResponse extends EnvelopeOf(DeliverySummaryDto) {}

export class DeliveryListResponse extends PageOf(DeliverySummaryDto) {}
