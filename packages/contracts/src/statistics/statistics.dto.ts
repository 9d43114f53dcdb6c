import { STATISTICS_GRANULARITIES, StatisticsGranularity } from '@herald/core';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsString, ValidateIf } from 'class-validator';
import { EnvelopeOf } from '../common/envelope';
import { coded } from '../validation/coded-constraint';

const asParameter = coded({ errorKind: 'INVALID_PARAMETER' });

/** GET /application/{id}/stats (PRODUCT.md §16). */
export class StatisticsQuery {
  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-11-24T15:00:00Z',
    description: 'The start of the window (default: until − 24 hours). The first bucket is the hour or day that holds it, whole.',
  })
  @ValidateIf((query: StatisticsQuery) => query.since !== undefined)
  @IsString({ ...asParameter, message: 'since must be given once, as an ISO-8601 date or date-time' })
  @IsISO8601({ strict: true }, { ...asParameter, message: 'since must be an ISO-8601 date or date-time' })
  since?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2026-11-25T15:00:00Z',
    description: 'The end of the window, exclusive (default: now). At most 90 days after since.',
  })
  @ValidateIf((query: StatisticsQuery) => query.until !== undefined)
  @IsString({ ...asParameter, message: 'until must be given once, as an ISO-8601 date or date-time' })
  @IsISO8601({ strict: true }, { ...asParameter, message: 'until must be an ISO-8601 date or date-time' })
  until?: string;

  @ApiPropertyOptional({
    enum: STATISTICS_GRANULARITIES,
    default: 'hour',
    description: 'Buckets of one UTC hour or one UTC day; at most 2,160 of them.',
  })
  @ValidateIf((query: StatisticsQuery) => query.granularity !== undefined)
  @IsIn(STATISTICS_GRANULARITIES, { ...asParameter, message: `granularity must be one of ${STATISTICS_GRANULARITIES.join(', ')}` })
  granularity?: StatisticsGranularity;
}

export class LatencyPercentilesDto {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    example: 84,
    description: 'Median duration of the successful attempts, in ms (within ±5%); null without any.',
  })
  p50!: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 412, description: '95th percentile, in ms (within ±5%); null without any.' })
  p95!: number | null;
}

export class StatisticsBucketDto {
  @ApiProperty({ format: 'date-time', example: '2026-11-25T14:00:00.000Z', description: 'The start of the bucket: a UTC hour or day.' })
  start!: string;

  @ApiProperty({
    type: 'integer',
    example: 1200,
    description:
      'Events sent: deliveries whose first attempt was made in the bucket (one per event delivered to the webhook; a replay is a new delivery and counts again).',
  })
  events!: number;

  @ApiProperty({
    type: 'integer',
    example: 1188,
    description:
      'Deliveries that succeeded in the bucket. Each delivery counts once, when it ends; a manual retry of an ended one does not count again.',
  })
  succeeded!: number;

  @ApiProperty({
    type: 'integer',
    example: 4,
    description: 'Deliveries that failed for good in the bucket (retries exhausted or a final answer), once each.',
  })
  failed!: number;

  @ApiProperty({ type: 'integer', example: 1230, description: 'Attempts made in the bucket, retries and manual ones included.' })
  attempts!: number;

  @ApiProperty({ type: 'integer', example: 42, description: 'Attempts that did not succeed.' })
  failed_attempts!: number;

  @ApiProperty({ type: LatencyPercentilesDto, description: "Percentiles of the successful attempts' durations." })
  latency_ms!: LatencyPercentilesDto;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { '5xx': 30, timeout: 8, connection_refused: 4 },
    description: "Failed attempts by error kind (`timeout`, `connection_refused`, …) or by the receiver's answer (`3xx`, `4xx`, `5xx`).",
  })
  errors!: Record<string, number>;
}

export class EventOutcomesDto {
  @ApiProperty({ type: 'integer', example: 1188 })
  succeeded!: number;

  @ApiProperty({ type: 'integer', example: 4 })
  failed!: number;
}

@ApiExtraModels(EventOutcomesDto)
export class StatisticsDto {
  @ApiProperty({ type: [StatisticsBucketDto], description: 'Every bucket that overlaps [since, until), oldest first, zeros included.' })
  buckets!: StatisticsBucketDto[];

  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(EventOutcomesDto) },
    example: { acw_start: { succeeded: 1188, failed: 4 } },
    description: 'Deliveries that ended in those buckets, by event type (types with statistics only).',
  })
  by_event!: Record<string, EventOutcomesDto>;
}

export class StatisticsResponse extends EnvelopeOf(StatisticsDto) {}
