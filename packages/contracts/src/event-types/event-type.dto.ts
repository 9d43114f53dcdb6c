import { EnvelopeOf, PageOf } from '../common/envelope';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { EVENT_TYPE_NAME_MAX_LENGTH, EVENT_TYPE_NAME_PATTERN } from '@herald/core';
import { IsCursor, PageQuery } from '../common/pagination.dto';
import { IsBoolean, IsDefined, IsObject, IsString, Matches, MaxLength, ValidateIf } from 'class-validator';
import { FreeForm } from '../validation/free-form';

export const EVENT_TYPE_DESCRIPTION_MAX_LENGTH = 1000;
/** PRODUCT.md §15: a schema is at most 64 KiB as JSON; an example, documentation only, the same. */
export const MAX_EVENT_TYPE_SCHEMA_BYTES = 64 * 1024;
export const MAX_EVENT_TYPE_EXAMPLE_BYTES = 64 * 1024;
/** The most problems a 400-08 names: enough to fix a payload, not a copy of a huge one. */
export const MAX_SCHEMA_MISMATCH_DETAILS = 20;

export class EventTypeQuery extends PageQuery {
  @IsCursor(EVENT_TYPE_NAME_PATTERN, 'an event type name')
  cursor?: string;
}

const SCHEMA_EXAMPLE = {
  type: 'object',
  required: ['agent_id', 'call_id'],
  properties: {
    agent_id: { type: 'string', description: 'The agent who entered after-call work.' },
    call_id: { type: 'string' },
    wrap_up_seconds: { type: 'integer', minimum: 0 },
  },
};
const PAYLOAD_EXAMPLE = { agent_id: 'a-17', call_id: 'c-9001', wrap_up_seconds: 45 };

const SCHEMA_DESCRIPTION =
  'A JSON Schema (draft 2020-12) of the payload, at most 64 KiB. References resolve only inside this document; nothing is fetched. ' +
  'Unknown keywords are refused, `format` is an annotation, and `pattern` uses linear-time (RE2) syntax: no lookaround or backreferences. ' +
  'null: no schema.';
const ENFORCE_DESCRIPTION = 'true: a payload that does not match the schema is refused (400-08). false: the schema only documents.';
const EXAMPLE_DESCRIPTION = 'A payload that satisfies the schema, shown to receivers. null: none.';

/** The schema fields, the same on create and update; each optional, the event type's state is checked as a whole. */
class EventTypeSchemaFields {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: SCHEMA_EXAMPLE,
    description: SCHEMA_DESCRIPTION,
  })
  // An admin's JSON document: kept exactly as sent (a property may be called `__proto__`), checked by the compiler.
  @FreeForm()
  @ValidateIf((request: EventTypeSchemaFields) => request.schema !== undefined && request.schema !== null)
  @IsObject({ message: 'schema must be a JSON object (a JSON Schema) or null' })
  schema?: Record<string, unknown> | null;

  // No `default` here: the generated client would make the field required. Omitted is false on create, unchanged on update.
  @ApiPropertyOptional({ type: 'boolean', description: `${ENFORCE_DESCRIPTION} Omitted: false on create, unchanged on update.` })
  @ValidateIf((request: EventTypeSchemaFields) => request.enforce !== undefined)
  @IsBoolean({ message: 'enforce must be a boolean' })
  enforce?: boolean;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    example: PAYLOAD_EXAMPLE,
    description: EXAMPLE_DESCRIPTION,
  })
  @FreeForm()
  @ValidateIf((request: EventTypeSchemaFields) => request.example !== undefined && request.example !== null)
  @IsObject({ message: 'example must be a JSON object (a payload) or null' })
  example?: Record<string, unknown> | null;
}

export class CreateEventTypeRequest extends EventTypeSchemaFields {
  @ApiProperty({ pattern: EVENT_TYPE_NAME_PATTERN.source, example: 'call_recording_ready' })
  @IsDefined()
  @IsString()
  @Matches(EVENT_TYPE_NAME_PATTERN, { message: `name must be 1 to ${EVENT_TYPE_NAME_MAX_LENGTH} of a-z, 0-9, "_" and "."` })
  name!: string;

  @ApiPropertyOptional({ maxLength: EVENT_TYPE_DESCRIPTION_MAX_LENGTH, example: 'A call recording can be downloaded.' })
  @ValidateIf((request: CreateEventTypeRequest) => request.description !== undefined)
  @IsString()
  @MaxLength(EVENT_TYPE_DESCRIPTION_MAX_LENGTH)
  description?: string;
}

/** `PUT /admin/event_types/{name}`: a field left out keeps its value; null removes a schema or an example. */
export class UpdateEventTypeRequest extends EventTypeSchemaFields {
  @ApiPropertyOptional({ maxLength: EVENT_TYPE_DESCRIPTION_MAX_LENGTH, example: 'An agent entered after-call work.' })
  @ValidateIf((request: UpdateEventTypeRequest) => request.description !== undefined)
  @IsString()
  @MaxLength(EVENT_TYPE_DESCRIPTION_MAX_LENGTH)
  description?: string;
}

export class EventTypeDto {
  @ApiProperty({ example: 'acw_start' })
  name!: string;

  @ApiProperty({ example: 'An agent entered after-call work.' })
  description!: string;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: SCHEMA_EXAMPLE, description: SCHEMA_DESCRIPTION })
  schema!: Record<string, unknown> | null;

  @ApiProperty({ type: 'boolean', example: false, description: ENFORCE_DESCRIPTION })
  enforce!: boolean;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, example: PAYLOAD_EXAMPLE, description: EXAMPLE_DESCRIPTION })
  example!: Record<string, unknown> | null;
}

export class EventTypeResponse extends EnvelopeOf(EventTypeDto) {}

export class EventTypeListResponse extends PageOf(EventTypeDto) {}
