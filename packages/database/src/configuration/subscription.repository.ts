import { Injectable } from '@nestjs/common';
import { AuditOf } from '../audit/audit.sql';
import { createAudit } from './audit-record';
import { classifyDatabaseError } from '../database-errors';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { ApplicationScope, SubscriptionRecord } from '../records';

const SELECT = { eventType: true, ensureDelivery: true, active: true } as const;
const DEFAULT_FLAGS = { ensureDelivery: false, active: true };
/** A subscription created by another request between this one's look and its write: look again, so few times suffice. */
const UPSERT_ATTEMPTS = 3;

@Injectable()
export class SubscriptionRepository {
  constructor(private readonly prisma: PrismaService) {}

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
  async delete(scope: ApplicationScope, eventType: string, audit: AuditOf<SubscriptionRecord>): Promise<boolean> {
    try {
      await this.prisma.$transaction(async (tx) => {
        const removed = await tx.subscription.delete({
          where: { applicationId_eventType: { applicationId: scope.applicationId, eventType } },
          select: SELECT,
        });
        await createAudit(tx, audit(removed));
      });
      return true;
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2025') return false;
      throw error;
    }
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
