import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsString, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import { coded } from '../validation/coded-constraint';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
const asParameter = coded({ errorKind: 'INVALID_PARAMETER' });

/** Query strings arrive as text; only plain decimal integers become numbers, anything else fails validation. */
const strictInteger = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;

export class PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @ValidateIf((query: PageQuery) => query.limit !== undefined)
  @Transform(strictInteger)
  @IsInt({ ...asParameter, message: 'limit must be an integer' })
  @Min(1, asParameter)
  @Max(MAX_PAGE_SIZE, asParameter)
  limit?: number;

  @ApiPropertyOptional({ description: 'next_cursor from the previous page.' })
  @ValidateIf((query: PageQuery) => query.cursor !== undefined)
  @IsString(asParameter)
  @MaxLength(200, asParameter)
  cursor?: string;
}
