import { OPERATIONAL_EVENT_TYPES } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { PgPool } from '../pg-pool';
import { ApplicationScope, Page, StoredEventRecord } from '../records';

/** The columns of a StoredEventRecord but its payload, and its deliveries' ids (oldest first). */
const EVENT_SUMMARY_COLUMNS = `
  e.id, e.event_type AS "eventType", e.created_at AS "createdAt", e.idempotency_key AS "idempotencyKey", e.ordering_key AS "orderingKey",
  ARRAY(SELECT d.id FROM deliveries d WHERE d.event_id = e.id ORDER BY d.id) AS "deliveryIds"`;

/** The api's read side of events: what was published, and which deliveries it made. */
@Injectable()
export class EventLogRepository {
  constructor(private readonly pg: PgPool) {}

  /**
   * Newest first; the cursor is the last id of the previous page (ids are time-ordered), so a
   * page is a range of the (application_id, id) index read backwards — no sort, however many
   * events the application has. Payloads are left out: a page of 100 could be 25 MB.
   */
  async list(
    scope: ApplicationScope,
    filter: { eventType?: string; idempotencyKey?: string },
    limit: number,
    before: string | null,
  ): Promise<Page<Omit<StoredEventRecord, 'payload'>>> {
    const values: unknown[] = [scope.applicationId, limit + 1, OPERATIONAL_EVENT_TYPES];
    // Herald's notices about the application are the operator's, not the customer's.
    const conditions = ['e.application_id = $1', 'e.event_type <> ALL($3::text[])'];
    if (filter.eventType) conditions.push(`e.event_type = $${values.push(filter.eventType)}`);
    // Unindexed on purpose: a look-up by hand (the console's search), read along the same range.
    if (filter.idempotencyKey) conditions.push(`e.idempotency_key = $${values.push(filter.idempotencyKey)}`);
    if (before) conditions.push(`e.id < $${values.push(before)}`);
    const rows = await this.pg.sql<Omit<StoredEventRecord, 'payload'>>(
      `SELECT ${EVENT_SUMMARY_COLUMNS}
         FROM events e
        WHERE ${conditions.join(' AND ')}
        ORDER BY e.id DESC
        LIMIT $2`,
      values,
    );
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? items[items.length - 1].id : null };
  }

  /**
   * The payloads of the application's events of one type, newest first, `limit` at most and
   * older than `before` (an id) when given: a filter is tried on them page by page, so the
   * caller holds one page of payloads (up to 256 KiB each) at a time.
   */
  async payloadsOf(
    scope: ApplicationScope,
    eventType: string,
    limit: number,
    before: string | null,
  ): Promise<{ id: string; payload: string }[]> {
    return this.pg.sql<{ id: string; payload: string }>(
      `SELECT e.id, e.payload FROM events e
        WHERE e.application_id = $1 AND e.event_type = $2 AND ($4::text IS NULL OR e.id < $4)
        ORDER BY e.id DESC
        LIMIT $3`,
      [scope.applicationId, eventType, limit, before],
    );
  }

  async find(scope: ApplicationScope, id: string): Promise<StoredEventRecord | null> {
    const [row] = await this.pg.sql<StoredEventRecord>(
      `SELECT ${EVENT_SUMMARY_COLUMNS}, e.payload FROM events e WHERE e.id = $1 AND e.application_id = $2 AND e.event_type <> ALL($3::text[])`,
      [id, scope.applicationId, OPERATIONAL_EVENT_TYPES],
    );
    return row ?? null;
  }
}
