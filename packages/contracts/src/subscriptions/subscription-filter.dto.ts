import { EnvelopeOf } from '../common/envelope';
import { MAX_FILTER_BYTES, MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH, MAX_FILTER_IN_VALUES } from '@herald/core';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsObject, ValidateIf } from 'class-validator';
import { FreeForm } from '../validation/free-form';
import { IsIntegerInRange } from '../validation/integer-in-range';

/** PRODUCT.md §14: the test route tries a filter on at most this many of the latest events, and lists this many matches. */
export const FILTER_TEST_LIMIT = { min: 1, max: 1000, default: 100 } as const;
export const FILTER_TEST_MAX_MATCHED_IDS = 20;

const FILTER_EXAMPLE = { 'queue.id': { $in: ['q-sales', 'q-support'] }, $or: [{ priority: { $gte: 3 } }, { vip: true }] };

export const FILTER_DESCRIPTION =
  'MongoDB query operators on the event payload. Keys are dotted paths into the payload (`queue.id`, `tags.0`) or ' +
  '`$and` / `$or` (non-empty arrays of filters) and `$not` (a filter). A path takes a JSON literal (equality) or an ' +
  'object of operators: `$eq`, `$ne`, `$in`, `$nin` (at most ' +
  `${MAX_FILTER_IN_VALUES} literals), \`$gt\`, \`$gte\`, \`$lt\`, \`$lte\` (a number or a string), \`$exists\` (a boolean). ` +
  `At most ${MAX_FILTER_BYTES} bytes as JSON, ${MAX_FILTER_DEPTH} levels deep, ${MAX_FILTER_CONDITIONS} conditions; ` +
  'anything else is refused (400-02) naming its place, e.g. `filter.$or[1].queue.id.$gt`.';

/** `PUT …/webhook/subscription/{event}/filter`. */
export class PutSubscriptionFilterRequest {
  @ApiProperty({ type: 'object', additionalProperties: true, example: FILTER_EXAMPLE, description: FILTER_DESCRIPTION })
  // The client's own document, kept exactly as sent (a path may be called `__proto__`), checked by core's checkFilter.
  @FreeForm()
  @IsDefined({ message: 'filter must be a JSON object (a filter)' })
  @IsObject({ message: 'filter must be a JSON object (a filter)' })
  filter!: Record<string, unknown>;
}

/** `POST …/filter/test`: a filter to try before saving it, or the stored one. */
export class TestSubscriptionFilterRequest {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: FILTER_EXAMPLE,
    description: `The filter to try; omitted: the stored one (none stored: every event matches). ${FILTER_DESCRIPTION}`,
  })
  @FreeForm()
  @ValidateIf((request: TestSubscriptionFilterRequest) => request.filter !== undefined)
  @IsObject({ message: 'filter must be a JSON object (a filter)' })
  filter?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: FILTER_TEST_LIMIT.min,
    maximum: FILTER_TEST_LIMIT.max,
    example: 100,
    description: `How many of the latest events of the type to try it on (default ${FILTER_TEST_LIMIT.default}).`,
  })
  @ValidateIf((request: TestSubscriptionFilterRequest) => request.limit !== undefined)
  @IsIntegerInRange(FILTER_TEST_LIMIT.min, FILTER_TEST_LIMIT.max)
  limit?: number;
}

export class SubscriptionFilterDto {
  @ApiProperty({ example: 'acw_start' })
  event!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: FILTER_EXAMPLE,
    description: 'The filter as stored; null: every event of the type is delivered.',
  })
  filter!: Record<string, unknown> | null;
}

export class SubscriptionFilterResponse extends EnvelopeOf(SubscriptionFilterDto) {}

export class SubscriptionFilterTestDto {
  @ApiProperty({ type: 'integer', example: 100, description: 'Events tried: the latest of the type, at most `limit`.' })
  tested!: number;

  @ApiProperty({ type: 'integer', example: 12, description: 'How many of them the filter matches.' })
  matched!: number;

  @ApiProperty({
    type: [String],
    example: ['evt_01JDQ8W5J7M0TQ1S7V5ZB8K2QX'],
    description: `The first ${FILTER_TEST_MAX_MATCHED_IDS} matching event ids, newest first.`,
  })
  matched_ids!: string[];
}

export class SubscriptionFilterTestResponse extends EnvelopeOf(SubscriptionFilterTestDto) {}
