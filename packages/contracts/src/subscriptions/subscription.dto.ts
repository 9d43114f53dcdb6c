import { ApiSuccessFlag } from '../common/envelope';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsBoolean, ValidateIf } from 'class-validator';

export class UpsertSubscriptionRequest {
  @ApiPropertyOptional({
    example: true,
    description:
      'Retry every failure (at least once) instead of only failures that surely never reached the receiver. Default false on creation; unchanged when omitted on update.',
  })
  @ValidateIf((request: UpsertSubscriptionRequest) => request.ensure_delivery !== undefined)
  @IsBoolean()
  ensure_delivery?: boolean;

  @ApiPropertyOptional({
    example: true,
    description: 'An inactive subscription creates no deliveries. Default true on creation; unchanged when omitted on update.',
  })
  @ValidateIf((request: UpsertSubscriptionRequest) => request.active !== undefined)
  @IsBoolean()
  active?: boolean;
}

export class SubscriptionFlagsDto {
  @ApiProperty({ example: true })
  ensure_delivery!: boolean;

  @ApiProperty({ example: true })
  active!: boolean;
}

export type SubscriptionMap = Record<string, SubscriptionFlagsDto>;

@ApiExtraModels(SubscriptionFlagsDto)
export class SubscriptionsResponse {
  @ApiSuccessFlag(true)
  success!: true;

  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: getSchemaPath(SubscriptionFlagsDto) },
    example: { acw_start: { ensure_delivery: true, active: true } },
    description: 'Map from event name to the subscription flags.',
  })
  subscriptions!: SubscriptionMap;
}
