import { APPLICATION_ID_MAX, AUDIT_ACTIONS, AUDIT_ACTOR_TYPES, AuditAction, AuditActorType, idPattern } from '@herald/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsString, Matches, ValidateIf } from 'class-validator';
import { PageOf } from '../common/envelope';
import { IsCursor, PageQuery } from '../common/pagination.dto';
import { IsIntegerInRange } from '../validation/integer-in-range';
import { coded } from '../validation/coded-constraint';

const asParameter = coded({ errorKind: 'INVALID_PARAMETER' });

export class AuditActorDto {
  @ApiProperty({ enum: AUDIT_ACTOR_TYPES, example: 'api_key' })
  type!: AuditActorType;

  @ApiProperty({
    example: 'key_01jd8x7a1b2c3d4e5f6g7h8j9k',
    description: "The API key's or portal link's id; for `system`, the part of Herald that acted (`auto-disable`).",
  })
  id!: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'hk_Xy3kP0',
    description: "An API key's display prefix (never more of the key); null for portal links and `system`.",
  })
  prefix!: string | null;
}

/** One change to configuration or access (PRODUCT.md §16). */
export class AuditRecordDto {
  @ApiProperty({ example: 'aud_01jd8x9c0d1e2f3g4h5j6k7m8n' })
  id!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:00:00.000Z' })
  at!: string;

  @ApiProperty({ type: AuditActorDto })
  actor!: AuditActorDto;

  @ApiProperty({ enum: AUDIT_ACTIONS, example: 'webhook.updated' })
  action!: AuditAction;

  @ApiProperty({ type: String, nullable: true, example: 'acc_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  account_id!: string | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 42 })
  application_id!: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    example: 'req_5e19d9d92d19da5b',
    description: "The request that made the change (its X-Request-Id); null for Herald's own (auto-disable).",
  })
  request_id!: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'array', minItems: 2, maxItems: 2, items: {} },
    example: { url: ['https://old.example.com/hook', 'https://example.com/hook'], 'headers.X-Api-Token': ['[redacted]', '[redacted]'] },
    description:
      'Each field that changed, as [before, after]; null where it did not exist. Secrets and keys are never written; an extra header is named (`headers.<name>`), its value shows as "[redacted]".',
  })
  changes!: Record<string, [unknown, unknown]>;
}

export class AuditListResponse extends PageOf(AuditRecordDto) {}

/** GET /application/{id}/audit: the application's records, newest first. */
export class ApplicationAuditQuery extends PageQuery {
  @ApiPropertyOptional({ enum: AUDIT_ACTIONS, description: 'Only records of this action.' })
  @ValidateIf((query: ApplicationAuditQuery) => query.action !== undefined)
  @IsIn(AUDIT_ACTIONS, { ...asParameter, message: `action must be one of ${AUDIT_ACTIONS.join(', ')}` })
  action?: AuditAction;

  @IsCursor(idPattern('aud'), 'an audit record id')
  cursor?: string;
}

const ACCOUNT_ID = /^acc_[0-9a-z]{26}$/;

/** GET /admin/audit: every record, or one account's, application's or action's, newest first. */
export class AdminAuditQuery extends ApplicationAuditQuery {
  @ApiPropertyOptional({ example: 'acc_01jd8x6q3k2m4n5p6r7s8t9v0w', description: "Only this account's records." })
  @ValidateIf((query: AdminAuditQuery) => query.account_id !== undefined)
  @IsString({ ...asParameter, message: 'account_id must be given once, as a string' })
  @Matches(ACCOUNT_ID, { ...asParameter, message: 'account_id must be an account id such as acc_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  account_id?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: APPLICATION_ID_MAX, description: "Only this application's records." })
  @ValidateIf((query: AdminAuditQuery) => query.application_id !== undefined)
  @Transform(({ value }) => (typeof value === 'string' && /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : value))
  @IsIntegerInRange(1, APPLICATION_ID_MAX, asParameter)
  application_id?: number;
}
