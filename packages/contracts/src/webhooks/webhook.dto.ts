import { EnvelopeOf } from '../common/envelope';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { BACKOFF_TYPES, BackoffType, RETRY_LIMITS } from '@herald/core';
import { Type } from 'class-transformer';
import { IsDefined, IsIn, IsObject, ValidateIf, ValidateNested } from 'class-validator';
import { FreeForm } from '../validation/free-form';
import { IsBackoffValueForType } from '../validation/backoff-value';
import { IsIntegerInRange } from '../validation/integer-in-range';
import { IsWebhookHeaders, MAX_CUSTOM_HEADERS } from '../validation/webhook-headers';
import { IsWebhookUrl, WEBHOOK_URL_MAX_LENGTH } from '../validation/webhook-url';

export class RetryConfigDto {
  @ApiProperty({
    type: 'integer',
    minimum: RETRY_LIMITS.retryValue.min,
    maximum: RETRY_LIMITS.retryValue.max,
    example: 30,
    description: 'Seconds to wait before the first retry.',
  })
  @IsDefined()
  @IsIntegerInRange(RETRY_LIMITS.retryValue.min, RETRY_LIMITS.retryValue.max)
  retry_value!: number;

  @ApiProperty({
    type: 'integer',
    minimum: RETRY_LIMITS.maxRetries.min,
    maximum: RETRY_LIMITS.maxRetries.max,
    example: 5,
    description: 'Retries after the first attempt.',
  })
  @IsDefined()
  @IsIntegerInRange(RETRY_LIMITS.maxRetries.min, RETRY_LIMITS.maxRetries.max)
  max_retries!: number;

  @ApiProperty({
    enum: BACKOFF_TYPES,
    example: 'multiplier',
    description:
      'How the wait grows. Delay before retry n: fixed = retry_value; linear = retry_value + (n-1)·backoff_value; ' +
      'multiplier = retry_value · backoff_value^(n-1). Each wait is capped at 86400 s.',
  })
  @IsDefined()
  @IsIn(BACKOFF_TYPES, { message: `backoff_type must be one of ${BACKOFF_TYPES.join(', ')}` })
  backoff_type!: BackoffType;

  @ApiProperty({
    type: 'integer',
    example: 2,
    description:
      'multiplier: the factor, 1 to 10. linear: seconds added per retry, 0 to 86400. fixed: 0 to 86400, ignored, and may be omitted (0 is stored).',
  })
  @ValidateIf((config: RetryConfigDto) => config.backoff_type !== 'fixed' || config.backoff_value !== undefined)
  @IsDefined({ message: 'backoff_value is required unless backoff_type is "fixed"' })
  @IsBackoffValueForType()
  backoff_value!: number;
}

export class UpsertWebhookRequest {
  @ApiProperty({
    maxLength: WEBHOOK_URL_MAX_LENGTH,
    example: 'https://example.com/hooks/herald',
    description: 'Absolute http(s) URL without credentials. Private and reserved addresses are refused.',
  })
  @IsDefined()
  @IsWebhookUrl()
  url!: string;

  @ApiProperty({ type: 'integer', enum: [0, 1], example: 1, description: '1 switches retries on. Booleans and strings are refused.' })
  @IsDefined()
  @IsIn([0, 1], { message: 'retry_enabled must be the integer 0 or 1' })
  retry_enabled!: 0 | 1;

  @ApiPropertyOptional({
    type: RetryConfigDto,
    description: 'Required when retry_enabled is 1. When omitted with retry_enabled 0, defaults are stored.',
  })
  @ValidateIf((request: UpsertWebhookRequest) => request.retry_enabled === 1 || request.retry_config !== undefined)
  @IsDefined({ message: 'retry_config is required when retry_enabled is 1' })
  @IsObject({ message: 'retry_config must be an object' })
  @ValidateNested()
  @Type(() => RetryConfigDto)
  retry_config?: RetryConfigDto;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    maxProperties: MAX_CUSTOM_HEADERS,
    example: { 'X-Api-Token': 'secret-token' },
    description: 'Extra headers sent with every delivery. Reserved names (host, content-*, hop-by-hop, proxy-*, webhook-*) are refused.',
  })
  @FreeForm()
  @ValidateIf((request: UpsertWebhookRequest) => request.headers !== undefined)
  @IsWebhookHeaders()
  headers?: Record<string, string>;
}

export class WebhookConfigDto {
  @ApiProperty({ example: 'https://example.com/hooks/herald' })
  url!: string;

  @ApiProperty({ type: 'integer', enum: [0, 1], example: 1 })
  retry_enabled!: 0 | 1;

  @ApiProperty({ type: RetryConfigDto })
  retry_config!: RetryConfigDto;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { 'X-Api-Token': 'secret-token' } })
  headers!: Record<string, string>;
}

export class WebhookResponse extends EnvelopeOf(WebhookConfigDto) {}

export class RetryScheduleDto {
  @ApiProperty({ type: 'integer', isArray: true, example: [30, 60, 120, 240, 480], description: 'Wait before each retry, in order.' })
  delays_seconds!: number[];

  @ApiProperty({ type: 'integer', example: 930, description: 'Sum of the waits: how long after the first attempt the last retry starts.' })
  total_seconds!: number;
}

export class RetryScheduleResponse extends EnvelopeOf(RetryScheduleDto) {}

export class WebhookSecretDto {
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', description: 'Standard Webhooks signing secret.' })
  secret!: string;
}

export class WebhookSecretResponse extends EnvelopeOf(WebhookSecretDto) {}
