import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, ValidateIf } from 'class-validator';
import { EnvelopeOf } from '../common/envelope';
import { IsIntegerInRange } from '../validation/integer-in-range';

/** PRODUCT.md §10: a throttle allows 1 to 10,000 attempts a second. */
export const THROTTLE_PER_SECOND = { min: 1, max: 10_000 } as const;

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
}

export class WebhookThrottleResponse extends EnvelopeOf(WebhookThrottleDto) {}
