import { EnvelopeOf, PageOf } from '../common/envelope';
import { IsCursor, PageQuery } from '../common/pagination.dto';
import { coded } from '../validation/coded-constraint';
import { API_KEY_SCOPES, APPLICATION_ID_MAX, ApiKeyScope, idPattern } from '@herald/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsString, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { IsIntegerInRange } from '../validation/integer-in-range';

export const NAME_MAX_LENGTH = 200;
export { APPLICATION_ID_MAX };
const ACCOUNT_ID = /^acc_[0-9a-z]{26}$/;

export class CreateAccountRequest {
  @ApiProperty({ minLength: 1, maxLength: NAME_MAX_LENGTH, example: 'Acme Contact Center' })
  @IsDefined()
  @IsString()
  @MinLength(1)
  @MaxLength(NAME_MAX_LENGTH)
  name!: string;
}

export class AccountDto {
  @ApiProperty({ example: 'acc_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  id!: string;

  @ApiProperty({ example: 'Acme Contact Center' })
  name!: string;
}

export class AccountResponse extends EnvelopeOf(AccountDto) {}

export class CreateApplicationRequest {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: APPLICATION_ID_MAX,
    example: 42,
    description: "The platform's own application id. Chosen by Herald when omitted.",
  })
  @ValidateIf((request: CreateApplicationRequest) => request.id !== undefined)
  @IsIntegerInRange(1, APPLICATION_ID_MAX)
  id?: number;

  @ApiProperty({ minLength: 1, maxLength: NAME_MAX_LENGTH, example: 'Support line EU' })
  @IsDefined()
  @IsString()
  @MinLength(1)
  @MaxLength(NAME_MAX_LENGTH)
  name!: string;

  @ApiProperty({ example: 'acc_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  @IsDefined()
  @IsString()
  @Matches(ACCOUNT_ID, { message: 'account_id must be an account id such as acc_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  account_id!: string;
}

export class ApplicationDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: APPLICATION_ID_MAX, example: 42 })
  id!: number;

  @ApiProperty({ example: 'Support line EU' })
  name!: string;

  @ApiProperty({ example: 'acc_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  account_id!: string;
}

export class ApplicationResponse extends EnvelopeOf(ApplicationDto) {}

export class CreateApiKeyRequest {
  @ApiProperty({ example: 'acc_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  @IsDefined()
  @IsString()
  @Matches(ACCOUNT_ID, { message: 'account_id must be an account id such as acc_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  account_id!: string;

  @ApiProperty({ minLength: 1, maxLength: NAME_MAX_LENGTH, example: 'production' })
  @IsDefined()
  @IsString()
  @MinLength(1)
  @MaxLength(NAME_MAX_LENGTH)
  name!: string;
}

export class ApiKeyDto {
  @ApiProperty({ example: 'key_01jd8x7a1b2c3d4e5f6g7h8j9k' })
  id!: string;

  @ApiProperty({ example: 'production' })
  name!: string;

  @ApiProperty({ example: 'hk_Xy3kP0', description: 'The first characters of the key, to recognise it.' })
  prefix!: string;

  @ApiProperty({ type: String, nullable: true, example: 'acc_01jd8x6q3k2m4n5p6r7s8t9v0w' })
  account_id!: string | null;

  @ApiProperty({ enum: API_KEY_SCOPES, example: 'account' })
  scope!: ApiKeyScope;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T09:00:00.000Z' })
  created_at!: string;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: null })
  revoked_at!: string | null;
}

export class CreatedApiKeyDto extends ApiKeyDto {
  @ApiProperty({ example: 'hk_Xy3kP0q9…', description: 'The key itself. Shown only in this response; Herald keeps only its hash.' })
  key!: string;
}

export class CreatedApiKeyResponse extends EnvelopeOf(CreatedApiKeyDto) {}

export class ApiKeyResponse extends EnvelopeOf(ApiKeyDto) {}

const asParameter = coded({ errorKind: 'INVALID_PARAMETER' });

/** Filters a listing to one account's applications or keys; an id of the wrong shape is 400-03. */
function AccountFilter(): PropertyDecorator {
  return (target, property) => {
    ApiPropertyOptional({ example: 'acc_01jd8x6q3k2m4n5p6r7s8t9v0w', description: "Only this account's." })(target, property);
    ValidateIf((query: Record<string, unknown>) => query[property as string] !== undefined)(target, property);
    IsString({ ...asParameter, message: 'account_id must be given once, as a string' })(target, property);
    Matches(ACCOUNT_ID, { ...asParameter, message: 'account_id must be an account id such as acc_01jd8x6q3k2m4n5p6r7s8t9v0w' })(
      target,
      property,
    );
  };
}

/** Newest first. */
export class AccountListQuery extends PageQuery {
  @IsCursor(idPattern('acc'), 'an account id')
  cursor?: string;
}

export class AccountListResponse extends PageOf(AccountDto) {}

/** An application listing's cursor: the id of the last application of the previous page. */
const APPLICATION_CURSOR = /^[1-9][0-9]{0,9}$/;

/** By id, ascending (ids are the platform's own, not times). */
export class ApplicationListQuery extends PageQuery {
  @AccountFilter()
  account_id?: string;

  @IsCursor(APPLICATION_CURSOR, 'an application id')
  cursor?: string;
}

/** GET /applications: the caller's applications (every one for an admin key), by id, ascending. */
export class OwnApplicationListQuery extends PageQuery {
  @IsCursor(APPLICATION_CURSOR, 'an application id')
  cursor?: string;
}

export class ApplicationListResponse extends PageOf(ApplicationDto) {}

/** Newest first; the bootstrap admin key (HERALD_ADMIN_KEY) has the one id that is not a ULID. */
export class ApiKeyListQuery extends PageQuery {
  @AccountFilter()
  account_id?: string;

  @IsCursor(/^key_([0-9a-hjkmnp-tv-z]{26}|bootstrap_admin)$/, 'an API key id')
  cursor?: string;
}

export class ApiKeyListResponse extends PageOf(ApiKeyDto) {}
