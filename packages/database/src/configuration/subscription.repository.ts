import { Injectable } from '@nestjs/common';
import { AuditOf, insertAudit } from '../audit/audit.sql';
import { createAudit } from './audit-record';
import { classifyDatabaseError } from '../database-errors';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { PgPool } from '../pg-pool';
import { ApplicationScope, SubscriptionRecord } from '../records';

const SELECT = { eventType: true, ensureDelivery: true, active: true } as const;
const DEFAULT_FLAGS = { ensureDelivery: false, active: true };
/** A subscription created by another request between this one's look and its write: look again, so few times suffice. */
const UPSERT_ATTEMPTS = 3;

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
   * Creates the subscription with defaults for omitted flags, or changes only the flags given,
   * with the audit record `audit` makes of it before and after, in one transaction. An existing
   * row is locked first (a no-op update), so `before` is exactly what this change replaced.
   * The webhook must exist (checked by the caller); `no_webhook` when it was deleted meanwhile.
   */
  async upsert(
    scope: ApplicationScope,
    eventType: string,
    flags: { ensureDelivery?: boolean; active?: boolean },
    audit: AuditOf<{ before: SubscriptionRecord | null; after: SubscriptionRecord }>,
  ): Promise<'saved' | 'no_webhook'> {
    const where = { applicationId: scope.applicationId, eventType };
    for (let attempt = 1; ; attempt++) {
      try {
        await this.prisma.$transaction(async (tx) => {
          const now = new Date();
          const { count } = await tx.subscription.updateMany({ where, data: { updatedAt: now } });
          const before = count > 0 ? await tx.subscription.findUnique({ where: { applicationId_eventType: where }, select: SELECT }) : null;
          const after = before
            ? await tx.subscription.update({
                where: { applicationId_eventType: where },
                data: { ...definedOnly(flags), updatedAt: now },
                select: SELECT,
              })
            : await tx.subscription.create({ data: { ...where, ...DEFAULT_FLAGS, ...definedOnly(flags) }, select: SELECT });
          await createAudit(tx, audit({ before, after }));
        });
        return 'saved';
      } catch (error) {
        const failure = classifyDatabaseError(error);
        if (failure === 'foreign_key_violation') return 'no_webhook';
        // Another request created it between the lock and the create: again, now finding it.
        if (failure !== 'unique_violation' || attempt >= UPSERT_ATTEMPTS) throw error;
      }
    }
  }

  /** Removes the subscription with the audit record `audit` makes of it, in one transaction; false when there was none. */
  /** Removes the subscription with its filter; `audit` is given both, so the record says what went. */
  async delete(
    scope: ApplicationScope,
    eventType: string,
    audit: AuditOf<SubscriptionRecord & { filter: Record<string, unknown> | null }>,
  ): Promise<boolean> {
    try {
      await this.prisma.$transaction(async (tx) => {
        const removed = await tx.subscription.delete({
          where: { applicationId_eventType: { applicationId: scope.applicationId, eventType } },
          select: { ...SELECT, filter: true },
        });
        await createAudit(tx, audit({ ...removed, filter: (removed.filter as Record<string, unknown> | null) ?? null }));
      });
      return true;
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') return false;
      throw error;
    }
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
   * Sets (or with null removes) the subscription's filter, with the audit record `audit` makes of
   * the filter it replaced, in one transaction (the row locked first, so `before` is exactly what
   * was replaced); false, and no record, when there is no such subscription. On the pool, as the
   * JSON text: Prisma rebuilds a JSON argument key by key, and assigning a key named `__proto__`
   * sets a prototype instead (the filter is the client's document, whose keys are kept as sent).
   * The table's trigger NOTIFYs every api process at the commit.
   */
  async setFilter(
    scope: ApplicationScope,
    eventType: string,
    filter: Record<string, unknown> | null,
    audit: AuditOf<{ before: Record<string, unknown> | null }>,
  ): Promise<boolean> {
    return this.pg.transaction(async (sql) => {
      const [locked] = await sql<{ filter: unknown }>(
        `SELECT filter FROM subscriptions WHERE application_id = $1 AND event_type = $2 FOR UPDATE`,
        [scope.applicationId, eventType],
      );
      if (!locked) return false;
      await sql(`UPDATE subscriptions SET filter = $3::json, updated_at = now() WHERE application_id = $1 AND event_type = $2`, [
        scope.applicationId,
        eventType,
        filter === null ? null : JSON.stringify(filter),
      ]);
      await insertAudit(sql, audit({ before: jsonObjectOrNull(locked.filter) }));
      return true;
    });
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
