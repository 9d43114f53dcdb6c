import { ApiProperty } from '@nestjs/swagger';
import { AccountDto } from '../admin/admin.dto';
import { EnvelopeOf } from '../common/envelope';

/**
 * What a screen needs to say where the caller is (PRODUCT.md §12): the application's name, its
 * account, and — for a portal token — until when the link works. Readable with a portal token,
 * unlike GET /applications and the admin routes.
 */
export class ApplicationOverviewDto {
  @ApiProperty({ type: 'integer', example: 42 })
  id!: number;

  @ApiProperty({ example: 'Support line EU' })
  name!: string;

  @ApiProperty({ type: AccountDto })
  account!: AccountDto;

  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'When the portal link the caller signed in with expires; null for an API key.',
  })
  portal_link_expires_at!: string | null;
}

export class ApplicationOverviewResponse extends EnvelopeOf(ApplicationOverviewDto) {}
