import { auditChanges, EVENT_TYPE_NAME_PATTERN } from '@herald/core';
import {
  AppError,
  CreateEventTypeRequest,
  DEFAULT_PAGE_SIZE,
  ErrorDetail,
  EventTypeDto,
  EventTypeQuery,
  MAX_EVENT_TYPE_EXAMPLE_BYTES,
  MAX_EVENT_TYPE_SCHEMA_BYTES,
  MAX_SCHEMA_MISMATCH_DETAILS,
  quoteInput,
  UpdateEventTypeRequest,
} from '@herald/contracts';
import { EventTypeRecord, EventTypeRepository, NewEventTypeRecord, Page } from '@herald/database';
import { Injectable } from '@nestjs/common';
import { AuditTrail } from '../common/audit/audit-trail';
import { Caller } from '../common/audit/caller';
import { EventTypeSchemas } from './event-type-schemas';
import { compilePayloadSchema, SchemaProblem } from './payload-schema';

type SchemaFields = Omit<NewEventTypeRecord, 'name'>;

/** The catalogue is the operator's: its records name no account or application. */
const NO_TARGET = { accountId: null, applicationId: null };

function schemaFieldsOf(record: EventTypeRecord): SchemaFields {
  return { description: record.description, schema: record.schema, enforce: record.enforce, example: record.example };
}

/** The catalogue (PRODUCT.md §6, §15): its admin routes and its reading routes. */
@Injectable()
export class EventTypeService {
  constructor(
    private readonly eventTypes: EventTypeRepository,
    private readonly schemas: EventTypeSchemas,
    private readonly audit: AuditTrail,
  ) {}

  async list(query: EventTypeQuery): Promise<Page<EventTypeDto>> {
    // A cursor is a name this list gave as next_cursor; any other word has the same shape, so
    // the name must be in the catalogue (event types are never removed, so an issued one is).
    if (query.cursor !== undefined && !(await this.eventTypes.exists(query.cursor))) {
      throw new AppError('INVALID_PARAMETER', 'cursor must be a next_cursor from a previous page (an event type name).', {
        details: [{ field: 'cursor', message: 'cursor must be a next_cursor from a previous page (an event type name)' }],
      });
    }
    const found = await this.eventTypes.list(query.limit ?? DEFAULT_PAGE_SIZE, query.cursor ?? null);
    return { items: found.items.map(toDto), nextCursor: found.nextCursor };
  }

  async get(name: string): Promise<EventTypeDto> {
    return toDto(await this.require(name));
  }

  /** Recorded as `event_type.created`, with every field. */
  async create(request: CreateEventTypeRequest, caller: Caller): Promise<EventTypeDto> {
    const fields: SchemaFields = {
      description: request.description ?? '',
      schema: request.schema ?? null,
      enforce: request.enforce ?? false,
      example: request.example ?? null,
    };
    checkSchemaFields(fields, { exampleSent: request.example !== undefined });
    // No api process has a validator for a type that did not exist, so there is nothing to tell them.
    const record = this.audit.entry(caller, 'event_type.created', NO_TARGET, auditChanges(null, { name: request.name, ...fields }));
    const created = await this.eventTypes.create({ name: request.name, ...fields }, record);
    if (created === 'name_taken') {
      throw new AppError('CONFLICT', `Event type "${request.name}" already exists.`, {
        details: [{ field: 'name', message: `"${request.name}" already exists` }],
      });
    }
    return toDto(created);
  }

  /**
   * A field left out keeps its value; the event type's new state is checked as a whole (a new
   * schema against the example already stored, too) and written only if no other change came
   * in between, so what is stored always passed these checks, and the record (`event_type.updated`)
   * names exactly what it replaced.
   */
  async update(name: string, request: UpdateEventTypeRequest, caller: Caller): Promise<EventTypeDto> {
    const current = await this.require(name);
    const fields: SchemaFields = {
      description: request.description ?? current.description,
      schema: request.schema === undefined ? current.schema : request.schema,
      enforce: request.enforce ?? current.enforce,
      example: request.example === undefined ? current.example : request.example,
    };
    checkSchemaFields(fields, { exampleSent: request.example !== undefined });
    // Named by the type (`acw_end.enforce`): a record of the catalogue has no application to tell which.
    const named = (state: SchemaFields) => Object.fromEntries(Object.entries(state).map(([field, value]) => [`${name}.${field}`, value]));
    const record = this.audit.entry(caller, 'event_type.updated', NO_TARGET, auditChanges(named(schemaFieldsOf(current)), named(fields)));
    const updated = await this.eventTypes.update(name, current.revision, fields, record);
    if (updated === 'changed') {
      throw new AppError('CONFLICT', `Event type "${name}" was changed by another request meanwhile; read it and send yours again.`);
    }
    // Other api processes hear of it through NOTIFY; this one (and the embedded database's) directly.
    this.schemas.forget(name);
    return toDto(updated);
  }

  private async require(name: string): Promise<EventTypeRecord> {
    // A name that cannot be an event type is looked up nowhere (a path lookup's 404, PRODUCT.md §2).
    const record = EVENT_TYPE_NAME_PATTERN.test(name) ? await this.eventTypes.find(name) : null;
    if (!record) throw new AppError('EVENT_TYPE_NOT_FOUND', `${quoteInput(name)} is not an event type; GET /event_types lists them.`);
    return record;
  }
}

/** 400-02 unless the schema compiles, fits, and the example (if any) satisfies it. */
function checkSchemaFields(fields: SchemaFields, { exampleSent }: { exampleSent: boolean }): void {
  const details: ErrorDetail[] = [];
  if (fields.schema !== null && jsonBytes(fields.schema) > MAX_EVENT_TYPE_SCHEMA_BYTES) {
    details.push({ field: 'schema', message: `must be at most ${MAX_EVENT_TYPE_SCHEMA_BYTES} bytes of JSON` });
  }
  if (fields.example !== null && jsonBytes(fields.example) > MAX_EVENT_TYPE_EXAMPLE_BYTES) {
    details.push({ field: 'example', message: `must be at most ${MAX_EVENT_TYPE_EXAMPLE_BYTES} bytes of JSON` });
  }
  if (fields.enforce && fields.schema === null) {
    details.push({ field: 'enforce', message: 'needs a schema to enforce: send one, or enforce false' });
  }
  if (details.length === 0 && fields.schema !== null) {
    const compiled = compilePayloadSchema(fields.schema);
    if (!compiled.ok) {
      details.push(...asDetails('schema', compiled.problems));
    } else if (fields.example !== null) {
      const problems = compiled.validate(fields.example);
      const stored = exampleSent ? '' : 'the stored example does not satisfy this schema (send a new example, or example null): ';
      if (problems) details.push(...asDetails('example', problems).map((detail) => ({ ...detail, message: stored + detail.message })));
    }
  }
  if (details.length > 0) {
    throw new AppError('VALIDATION_FAILED', `${details[0].field}: ${details[0].message}`, { details });
  }
}

/** Problems as details whose field is a JSON pointer under `root`: `schema/properties/agent_id/type`, `payload/agent_id`. */
export function asDetails(root: string, problems: readonly SchemaProblem[]): ErrorDetail[] {
  return problems
    .slice(0, MAX_SCHEMA_MISMATCH_DETAILS)
    .map((problem) => ({ field: `${root}${problem.pointer}`, message: problem.message }));
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value));
}

function toDto(record: EventTypeRecord): EventTypeDto {
  return { name: record.name, description: record.description, schema: record.schema, enforce: record.enforce, example: record.example };
}
