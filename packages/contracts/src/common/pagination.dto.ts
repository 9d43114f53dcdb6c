import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, Matches, ValidateIf } from 'class-validator';
import { IsIntegerInRange } from '../validation/integer-in-range';
import { coded } from '../validation/coded-constraint';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;
const asParameter = coded({ errorKind: 'INVALID_PARAMETER' });

/** Query strings arrive as text; only plain decimal integers become numbers, anything else fails validation. */
const strictInteger = ({ value }: { value: unknown }) => (typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value);

export class PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @ValidateIf((query: PageQuery) => query.limit !== undefined)
  @Transform(strictInteger)
  @IsIntegerInRange(1, MAX_PAGE_SIZE, asParameter)
  limit?: number;
}

/**
 * A cursor is the key of the last item of the previous page. Each paged query says what such
 * a key looks like, so a cursor Herald could not have issued is a 400-03, never silently ignored.
 */
export function IsCursor(pattern: RegExp, what: string): PropertyDecorator {
  return (target, propertyName) => {
    ApiPropertyOptional({ description: 'next_cursor from the previous page.', pattern: pattern.source })(target, propertyName);
    ValidateIf((query: Record<string, unknown>) => query[propertyName as string] !== undefined)(target, propertyName);
    // Registration order is the order under stopAtFirstError: the type first.
    IsString({ ...asParameter, message: 'cursor must be given once, as a string' })(target, propertyName);
    Matches(pattern, { ...asParameter, message: `cursor must be a next_cursor from a previous page (${what})` })(target, propertyName);
  };
}
