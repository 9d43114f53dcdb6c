import { EnvelopeOf, PageOf } from '../common/envelope';
import { ATTEMPT_ERRORS, DELIVERY_STATUSES, DeliveryStatus, EVENT_TYPE_NAME_MAX_LENGTH, idPattern } from '@herald/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsISO8601, IsString, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { IsCursor } from '../common/pagination.dto';
import { EventFilteredPageQuery } from '../events/event.dto';
import { coded } from '../validation/coded-constraint';

export class DeliveryQuery extends EventFilteredPageQuery {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @ValidateIf((query: DeliveryQuery) => query.status !== undefined)
  @IsIn(DELIVERY_STATUSES, {
    ...coded({ errorKind: 'INVALID_PARAMETER' }),
    message: `status must be one of ${DELIVERY_STATUSES.join(', ')}`,
  })
  status?: DeliveryStatus;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-11-23T04:00:00Z',
    description: 'Only deliveries created at or after this time.',
  })
  @ValidateIf((query: DeliveryQuery) => query.since !== undefined)
  @IsISO8601({ strict: true }, { ...coded({ errorKind: 'INVALID_PARAMETER' }), message: 'since must be an ISO-8601 date or date-time' })
  since?: string;

  @ApiPropertyOptional({ format: 'date-time', example: '2026-11-23T10:00:00Z', description: 'Only deliveries created before this time.' })
  @ValidateIf((query: DeliveryQuery) => query.until !== undefined)
  @IsISO8601({ strict: true }, { ...coded({ errorKind: 'INVALID_PARAMETER' }), message: 'until must be an ISO-8601 date or date-time' })
  until?: string;

  @IsCursor(idPattern('dlv'), 'a delivery id')
  cursor?: string;
}

/** The filters of the delivery log without paging: what GET …/deliveries/counts counts. */
export class DeliveryCountsQuery {
  @ApiPropertyOptional({ example: 'acw_start' })
  @ValidateIf((query: DeliveryCountsQuery) => query.event !== undefined)
  @IsString(coded({ errorKind: 'INVALID_PARAMETER' }))
  @MaxLength(EVENT_TYPE_NAME_MAX_LENGTH, coded({ errorKind: 'INVALID_PARAMETER' }))
  event?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-11-23T04:00:00Z',
    description: 'Only deliveries created at or after this time.',
  })
  @ValidateIf((query: DeliveryCountsQuery) => query.since !== undefined)
  @IsISO8601({ strict: true }, { ...coded({ errorKind: 'INVALID_PARAMETER' }), message: 'since must be an ISO-8601 date or date-time' })
  since?: string;

  @ApiPropertyOptional({ format: 'date-time', example: '2026-11-23T10:00:00Z', description: 'Only deliveries created before this time.' })
  @ValidateIf((query: DeliveryCountsQuery) => query.until !== undefined)
  @IsISO8601({ strict: true }, { ...coded({ errorKind: 'INVALID_PARAMETER' }), message: 'until must be an ISO-8601 date or date-time' })
  until?: string;
}

export class DeliveryCountsDto {
  @ApiProperty({ type: 'integer', example: 3 })
  pending!: number;

  @ApiProperty({ type: 'integer', example: 0 })
  sending!: number;

  @ApiProperty({ type: 'integer', example: 0 })
  paused!: number;

  @ApiProperty({ type: 'integer', example: 1200 })
  succeeded!: number;

  @ApiProperty({ type: 'integer', example: 14 })
  failed!: number;

  @ApiProperty({ type: 'integer', example: 2 })
  cancelled!: number;

  @ApiProperty({ type: 'integer', example: 1219, description: 'Every delivery the filters match.' })
  total!: number;
}

export class DeliveryCountsResponse extends EnvelopeOf(DeliveryCountsDto) {}

export class DeliveryAttemptDto {
  @ApiProperty({ type: 'integer', example: 1 })
  number!: number;

  @ApiProperty({ format: 'date-time' })
  started_at!: string;

  @ApiProperty({ type: 'integer', example: 42 })
  duration_ms!: number;

  @ApiProperty({ example: 'https://example.com/hooks/herald', description: 'The URL this attempt used.' })
  url!: string;

  @ApiProperty({ type: 'integer', nullable: true, example: 503 })
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

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    nullable: true,
    example: {
      'content-type': 'application/json',
      'user-agent': 'Herald/0.1.0',
      'x-tenant': 'acme',
      'webhook-id': 'evt_01jd8x6q3k2m4n5p6r7s8t9v0w',
      'webhook-timestamp': '1763900000',
      'webhook-signature': 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    },
    description: 'The request headers Herald sent, in order, signature included; null for attempts recorded before Herald kept them.',
  })
  request_headers!: Record<string, string> | null;
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

  @ApiProperty({ type: 'integer', example: 2 })
  attempt_count!: number;

  @ApiProperty({ type: String, nullable: true, format: 'date-time' })
  next_attempt_at!: string | null;
}

/** What the latest attempt of a delivery got: the log says why without opening the delivery. */
export class DeliveryLastAttemptDto {
  @ApiProperty({ format: 'date-time' })
  started_at!: string;

  @ApiProperty({ type: 'integer', nullable: true, example: 502 })
  response_status!: number | null;

  @ApiProperty({ type: String, nullable: true, enum: ATTEMPT_ERRORS, description: 'Why no answer came; null when the receiver answered.' })
  error!: string | null;
}

/** A row of the delivery log: the delivery and the outcome of its latest attempt. */
export class DeliveryLogEntryDto extends DeliverySummaryDto {
  @ApiProperty({ type: DeliveryLastAttemptDto, nullable: true, description: 'null before the first attempt.' })
  last_attempt!: DeliveryLastAttemptDto | null;
}

export class DeliveryDto extends DeliverySummaryDto {
  @ApiProperty({ type: [DeliveryAttemptDto] })
  attempts!: DeliveryAttemptDto[];
}

export class DeliveryResponse extends EnvelopeOf(DeliveryDto) {}

export class DeliveryRetryResponse extends EnvelopeOf(DeliverySummaryDto) {}

export class DeliveryListResponse extends PageOf(DeliveryLogEntryDto) {}

export class RecoverDeliveriesRequest {
  @ApiProperty({ format: 'date-time', example: '2026-11-23T04:00:00Z', description: 'Failed deliveries created at or after this time…' })
  @IsDefined()
  @IsString()
  @IsISO8601({ strict: true }, { message: 'since must be an ISO-8601 date or date-time' })
  since!: string;

  @ApiPropertyOptional({ format: 'date-time', example: '2026-11-23T10:00:00Z', description: '…and before this time (default: now).' })
  @ValidateIf((request: RecoverDeliveriesRequest) => request.until !== undefined)
  @IsString()
  @IsISO8601({ strict: true }, { message: 'until must be an ISO-8601 date or date-time' })
  until?: string;

  @ApiPropertyOptional({ example: 'acw_start', description: 'Only deliveries of this event type.' })
  @ValidateIf((request: RecoverDeliveriesRequest) => request.event !== undefined)
  @IsString()
  @MinLength(1)
  @MaxLength(EVENT_TYPE_NAME_MAX_LENGTH)
  event?: string;
}

export class RecoverResultDto {
  @ApiProperty({ type: 'integer', example: 1250, description: 'How many failed deliveries were given one attempt now.' })
  requeued!: number;
}

export class DeliveryRecoverResponse extends EnvelopeOf(RecoverResultDto) {}
