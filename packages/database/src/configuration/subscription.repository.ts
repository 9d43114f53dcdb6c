import { Injectable } from '@nestjs/common';
import { classifyDatabaseError } from '../database-errors';
import { PrismaService } from '../prisma.service';
import { PgPool } from '../pg-pool';
import { ApplicationScope, SubscriptionRecord } from '../records';

const SELECT = { eventType: true, ensureDelivery: true, active: true } as const;
const DEFAULT_FLAGS = { ensureDelivery: false, active: true };

@Injectable()
export class SubscriptionRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly pg: PgPool,
  ) {}

  async list(scope: ApplicationScope): Promise<SubscriptionRecord[]> {
    return this.prisma.subscription.findMany({
      where: { applicationId: scope.applicationId },
      orderBy: { eventType: 'asc' },
      select: SELECT,
    });
  }

  /**
   * Creates the subscription with defaults for omitted flags, or changes only the flags given.
   * The webhook must exist (checked by the caller); `no_webhook` when it was deleted meanwhile.
   */
  async upsert(
    scope: ApplicationScope,
    eventType: string,
    flags: { ensureDelivery?: boolean; active?: boolean },
  ): Promise<'saved' | 'no_webhook'> {
    try {
      await this.prisma.subscription.upsert({
        where: { applicationId_eventType: { applicationId: scope.applicationId, eventType } },
        create: { applicationId: scope.applicationId, eventType, ...DEFAULT_FLAGS, ...definedOnly(flags) },
        update: { ...definedOnly(flags), updatedAt: new Date() },
        select: SELECT,
      });
      return 'saved';
    } catch (error) {
      if (classifyDatabaseError(error) === 'foreign_key_violation') return 'no_webhook';
      throw error;
    }
  }

  /** True when there was a subscription to remove. */
  async delete(scope: ApplicationScope, eventType: string): Promise<boolean> {
    const { count } = await this.prisma.subscription.deleteMany({
      where: { applicationId: scope.applicationId, eventType },
    });
    return count > 0;
  }

  /**
   * The subscription's payload filter: `{ filter: null }` when it has none, null when there is no
   * such subscription. Stored as written (a `json` column), so its keys keep their order.
   */
  async findFilter(scope: ApplicationScope, eventType: string): Promise<{ filter: Record<string, unknown> | null } | null> {
    const row = await this.prisma.subscription.findUnique({
      where: { applicationId_eventType: { applicationId: scope.applicationId, eventType } },
      select: { filter: true },
    });
    return row ? { filter: jsonObjectOrNull(row.filter) } : null;
  }

  /**
   * What a publish of `eventType` must pass for this application: the subscription's filter, or
   * null when there is none or no subscription. `unknown_event_type` when the catalogue does not
   * have the type (publishing refuses it; a cache should not remember it). One round trip.
   */
  async filterForPublishing(
    scope: ApplicationScope,
    eventType: string,
  ): Promise<{ filter: Record<string, unknown> | null } | 'unknown_event_type'> {
    const row = await this.prisma.eventType.findUnique({
      where: { name: eventType },
      select: { subscriptions: { where: { applicationId: scope.applicationId }, select: { filter: true } } },
    });
    if (!row) return 'unknown_event_type';
    return { filter: row.subscriptions.length > 0 ? jsonObjectOrNull(row.subscriptions[0].filter) : null };
  }

  /**
   * Sets (or with null removes) the subscription's filter; false when there is no such
   * subscription. On the pool, as the JSON text: Prisma rebuilds a JSON argument key by key, and
   * assigning a key named `__proto__` sets a prototype instead (the filter is the client's
   * document, whose keys are kept as sent). The table's trigger NOTIFYs every api process in
   * the same statement.
   */
  async setFilter(scope: ApplicationScope, eventType: string, filter: Record<string, unknown> | null): Promise<boolean> {
    const rows = await this.pg.sql(
      `UPDATE subscriptions SET filter = $3::json, updated_at = now() WHERE application_id = $1 AND event_type = $2 RETURNING event_type`,
      [scope.applicationId, eventType, filter === null ? null : JSON.stringify(filter)],
    );
    return rows.length > 0;
  }
}

/** A `json` column as Prisma hands it over (parsed, or text where a driver keeps it so). */
function jsonObjectOrNull(value: unknown): Record<string, unknown> | null {
  if (value === null || value === undefined) return null;
  return (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
