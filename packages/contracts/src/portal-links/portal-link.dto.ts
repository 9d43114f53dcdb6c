import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { EnvelopeOf } from '../common/envelope';
import { IsIntegerInRange } from '../validation/integer-in-range';

/** PRODUCT.md §12: a portal link lives from a minute to a day, an hour unless asked otherwise. */
export const PORTAL_LINK_LIFETIME_SECONDS = { min: 60, max: 86_400, default: 3_600 } as const;

export class CreatePortalLinkRequest {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: PORTAL_LINK_LIFETIME_SECONDS.min,
    maximum: PORTAL_LINK_LIFETIME_SECONDS.max,
    default: PORTAL_LINK_LIFETIME_SECONDS.default,
    example: 3600,
    description: 'How long the link works, in seconds from now.',
  })
  @ValidateIf((request: CreatePortalLinkRequest) => request.expires_in_seconds !== undefined)
  @IsIntegerInRange(PORTAL_LINK_LIFETIME_SECONDS.min, PORTAL_LINK_LIFETIME_SECONDS.max)
  expires_in_seconds?: number;
}

export class PortalLinkDto {
  @ApiProperty({
    example: '/console/#/portal?application_id=42&token=hp_8yF1c0bq2nJx7RkV1mZP4sT9wLh3dQe6aUo5iYg0KcE',
    description:
      "Opens the console for this one application. Relative to Herald's own origin (prefix the address the API is " +
      'reached at); the token is in the URL fragment, which browsers never send to a server.',
  })
  url!: string;

  @ApiProperty({
    example: 'hp_8yF1c0bq2nJx7RkV1mZP4sT9wLh3dQe6aUo5iYg0KcE',
    description: "Shown only here. Works as an API key on this application's routes only, until expires_at or until revoked.",
  })
  token!: string;

  @ApiProperty({ format: 'date-time', example: '2026-11-23T10:00:00.000Z' })
  expires_at!: string;
}

export class PortalLinkResponse extends EnvelopeOf(PortalLinkDto) {}

export class RevokedPortalLinksDto {
  @ApiProperty({ type: 'integer', minimum: 0, example: 2, description: 'Links that worked until now; expired ones are not counted.' })
  revoked!: number;
}

export class RevokedPortalLinksResponse extends EnvelopeOf(RevokedPortalLinksDto) {}
