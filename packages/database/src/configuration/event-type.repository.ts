import { OPERATIONAL_EVENT_TYPES, isOperationalEventType } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { AuditEntry, auditValues, insertAuditFrom } from '../audit/audit.sql';
import { auditCreateData } from './audit-record';
import { classifyDatabaseError } from '../database-errors';
import { EVENT_TYPE_CHANNEL } from '../notifications/channel-listener';
import { PgPool } from '../pg-pool';
import { PrismaService } from '../prisma.service';
import { EventTypeRecord, NewEventTypeRecord, Page } from '../records';

const SELECT = { name: true, description: true, schema: true, enforce: true, example: true, revision: true } as const;

/**
 * The catalogue of event names. Reads and creation through Prisma; an update is one statement on
 * the pool, because it NOTIFYs every api process in the statement that changes the row (so a
 * schema is never enforced stale past the moment it changed, as a revoked key is never accepted).
 */
@Injectable()
export class EventTypeRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly pg: PgPool,
  ) {}

  /**
   * The customers' event types by name (Herald's operational notices are in the table, for the
   * events that name them, but not theirs); the cursor is the last name of the previous page.
   */
  async list(limit: number, after: string | null): Promise<Page<EventTypeRecord>> {
    const notOperational = { notIn: [...OPERATIONAL_EVENT_TYPES] };
    const rows = await this.prisma.eventType.findMany({
      where: { name: after === null ? notOperational : { ...notOperational, gt: after } },
      orderBy: { name: 'asc' },
      take: limit + 1,
      select: SELECT,
    });
    const items = rows.slice(0, limit).map(toRecord);
    return { items, nextCursor: rows.length > limit ? items[items.length - 1].name : null };
  }

  /** One of the customers' event types, or null. */
  async find(name: string): Promise<EventTypeRecord | null> {
    if (isOperationalEventType(name)) return null;
    const row = await this.prisma.eventType.findUnique({ where: { name }, select: SELECT });
    return row ? toRecord(row) : null;
  }

  /** Whether customers may use `name` (subscribe to it, publish it). */
  async exists(name: string): Promise<boolean> {
    if (isOperationalEventType(name)) return false;
    return (await this.prisma.eventType.count({ where: { name } })) > 0;
  }

  /** The event type and its audit record, in one transaction. `name_taken`: the catalogue has one of that name already. */
  async create(eventType: NewEventTypeRecord, audit: AuditEntry): Promise<EventTypeRecord | 'name_taken'> {
    try {
      const [row] = await this.prisma.$transaction([
        this.prisma.eventType.create({
          // A null schema or example is the column's default (SQL NULL); Prisma spells it DbNull.
          data: {
            name: eventType.name,
            description: eventType.description,
            enforce: eventType.enforce,
            ...(eventType.schema === null ? {} : { schema: eventType.schema as object }),
            ...(eventType.example === null ? {} : { example: eventType.example as object }),
          },
          select: SELECT,
        }),
        this.prisma.auditRecord.create({ data: auditCreateData(audit), select: { id: true } }),
      ]);
      return toRecord(row);
    } catch (error) {
      if (classifyDatabaseError(error) === 'unique_violation') return 'name_taken';
      throw error;
    }
  }

  /**
   * Replaces the event type's description, schema, enforcement and example, only while its
   * revision is still `revision` (the one the caller checked the new state against): `changed`
   * when another change came first or the type is gone, and nothing is written. The new revision
   * is NOTIFYd to every api process, and `audit` (made from the state at `revision`) recorded, in
   * the same statement.
   */
  async update(
    name: string,
    revision: number,
    fields: Omit<NewEventTypeRecord, 'name'>,
    audit: AuditEntry,
  ): Promise<EventTypeRecord | 'changed'> {
    const rows = await this.pg.sql<{
      name: string;
      description: string;
      schema: unknown;
      enforce: boolean;
      example: unknown;
      revision: number;
    }>(
      `WITH updated AS (
         UPDATE event_types SET description = $3, schema = $4::json, enforce = $5, example = $6::json, revision = revision + 1
          WHERE name = $1 AND revision = $2
          RETURNING name, description, schema, enforce, example, revision
       ), audited AS (
         ${insertAuditFrom('updated', 8)}
       )
       SELECT updated.*, pg_notify($7, updated.name)::text AS notified FROM updated`,
      [
        name,
        revision,
        fields.description,
        fields.schema === null ? null : JSON.stringify(fields.schema),
        fields.enforce,
        fields.example === null ? null : JSON.stringify(fields.example),
        EVENT_TYPE_CHANNEL,
        ...auditValues(audit),
      ],
    );
    return rows.length === 0 ? 'changed' : toRecord(rows[0]);
  }
}

function toRecord(row: {
  name: string;
  description: string;
  schema: unknown;
  enforce: boolean;
  example: unknown;
  revision: number;
}): EventTypeRecord {
  return {
    name: row.name,
    description: row.description,
    schema: jsonObjectOrNull(row.schema),
    enforce: row.enforce,
    example: jsonObjectOrNull(row.example),
    revision: Number(row.revision),
  };
}

/** A `json` column as pg or Prisma hand it over (parsed, or text where a driver keeps it so). */
function jsonObjectOrNull(value: unknown): Record<string, unknown> | null {
  if (value === null || value === undefined) return null;
  return (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;
}
