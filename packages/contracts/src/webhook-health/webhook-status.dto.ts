import { DISABLED_REASONS, DisabledReason, WEBHOOK_STATES, WebhookState } from '@herald/core';
import { ApiProperty } from '@nestjs/swagger';
import { EnvelopeOf } from '../common/envelope';

/** A webhook's health (PRODUCT.md §10). */
export class WebhookStatusDto {
  @ApiProperty({ enum: WEBHOOK_STATES, description: 'disabled: deliveries are paused (kept) until it is enabled again.' })
  state!: WebhookState;

  @ApiProperty({ type: String, nullable: true, format: 'date-time' })
  disabled_at!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    enum: DISABLED_REASONS,
    description: 'failing: Herald disabled it after HERALD_DISABLE_AFTER_HOURS of nothing but failures; manual: POST …/webhook/disable.',
  })
  disabled_reason!: DisabledReason | null;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', description: 'The first failed attempt since the last success.' })
  failing_since!: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'The last successful attempt, to the second: under steady success it is recorded at most once a second.',
  })
  last_success_at!: string | null;

  @ApiProperty({ type: 'integer', example: 0, description: 'Failed attempts since the last success.' })
  consecutive_failures!: number;

  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description:
      'While it is failing (and active): when Herald will disable it unless an attempt succeeds first, HERALD_DISABLE_AFTER_HOURS after failing_since (if by then at least 10 attempts have failed). Null otherwise, and when auto-disable is off.',
  })
  will_disable_at!: string | null;
}

export class WebhookStatusResponse extends EnvelopeOf(WebhookStatusDto) {}
