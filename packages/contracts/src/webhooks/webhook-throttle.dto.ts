import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsOptional, ValidateIf } from 'class-validator';
import { EnvelopeOf } from '../common/envelope';
import { IsIntegerInRange } from '../validation/integer-in-range';

/** PRODUCT.md §10: a throttle allows 1 to 10,000 attempts a second. */
export const THROTTLE_PER_SECOND = { min: 1, max: 10_000 } as const;

/** PRODUCT.md §17: attempts in flight to one endpoint at once, across every worker. */
export const MAX_IN_FLIGHT = { min: 1, max: 1_000 } as const;

const MAX_IN_FLIGHT_DESCRIPTION =
  'At most this many attempts are in flight to the webhook at once, across every worker (PRODUCT.md §17); deliveries ' +
  'over it wait in the queue, they never fail. null: the operator’s default (HERALD_ENDPOINT_MAX_IN_FLIGHT, 16 unless set).';

const PER_SECOND_DESCRIPTION =
  'At most this many attempts a second reach the webhook, however many workers run; deliveries over it wait for a slot, ' +
  'they never fail. null: no throttle.';

export class SetWebhookThrottleRequest {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: THROTTLE_PER_SECOND.min,
    maximum: THROTTLE_PER_SECOND.max,
    example: 20,
    description: `${PER_SECOND_DESCRIPTION} Required: send null to remove the throttle.`,
  })
  // null removes the throttle; anything else, a missing field included, must be an integer in range.
  @ValidateIf((request: SetWebhookThrottleRequest) => request.per_second !== null)
  @IsDefined({
    message: `per_second is required: an integer from ${THROTTLE_PER_SECOND.min} to ${THROTTLE_PER_SECOND.max}, or null to remove the throttle`,
  })
  @IsIntegerInRange(THROTTLE_PER_SECOND.min, THROTTLE_PER_SECOND.max)
  per_second!: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    required: false,
    minimum: MAX_IN_FLIGHT.min,
    maximum: MAX_IN_FLIGHT.max,
    example: 8,
    description: `${MAX_IN_FLIGHT_DESCRIPTION} Left out: unchanged.`,
  })
  // Left out: unchanged; null: back to the default; anything else must be an integer in range.
  @IsOptional()
  @IsIntegerInRange(MAX_IN_FLIGHT.min, MAX_IN_FLIGHT.max)
  max_in_flight?: number | null;
}

export class WebhookThrottleDto {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: THROTTLE_PER_SECOND.min,
    maximum: THROTTLE_PER_SECOND.max,
    example: 20,
    description: PER_SECOND_DESCRIPTION,
  })
  per_second!: number | null;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: MAX_IN_FLIGHT.min,
    maximum: MAX_IN_FLIGHT.max,
    example: 8,
    description: MAX_IN_FLIGHT_DESCRIPTION,
  })
  max_in_flight!: number | null;
}

export class WebhookThrottleResponse extends EnvelopeOf(WebhookThrottleDto) {}
