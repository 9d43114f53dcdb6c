import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, ValidateIf } from 'class-validator';
import { EnvelopeOf } from '../common/envelope';
import { FreeForm } from '../validation/free-form';
import { IsWebhookHeaders, MAX_CUSTOM_HEADERS } from '../validation/webhook-headers';
import { IsWebhookUrl, WEBHOOK_URL_MAX_LENGTH } from '../validation/webhook-url';

/** The operator's own endpoint (PRODUCT.md §10): the same URL and header rules as a customer's webhook. */
export class UpsertOperationalWebhookRequest {
  @ApiProperty({
    maxLength: WEBHOOK_URL_MAX_LENGTH,
    example: 'https://ops.example.com/hooks/herald',
    description: 'Absolute http(s) URL without credentials. Private and reserved addresses are refused.',
  })
  @IsDefined()
  @IsWebhookUrl()
  url!: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    maxProperties: MAX_CUSTOM_HEADERS,
    example: { 'X-Ops-Token': 'secret-token' },
    description: 'Extra headers sent with every notice. Reserved names (host, content-*, hop-by-hop, proxy-*, webhook-*) are refused.',
  })
  @FreeForm()
  @ValidateIf((request: UpsertOperationalWebhookRequest) => request.headers !== undefined)
  @IsWebhookHeaders()
  headers?: Record<string, string>;
}

export class OperationalWebhookDto {
  @ApiProperty({ example: 'https://ops.example.com/hooks/herald' })
  url!: string;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { 'X-Ops-Token': 'secret-token' } })
  headers!: Record<string, string>;

  @ApiProperty({
    type: [String],
    example: ['webhook.disabled', 'webhook.enabled', 'delivery.exhausted'],
    description: 'What Herald sends it, signed with its own secret (Standard Webhooks), with the default retry policy.',
  })
  events!: string[];

  @ApiProperty({ format: 'date-time' })
  created_at!: string;

  @ApiProperty({ format: 'date-time' })
  updated_at!: string;
}

export class OperationalWebhookResponse extends EnvelopeOf(OperationalWebhookDto) {}
