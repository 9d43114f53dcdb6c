import { Injectable } from '@nestjs/common';
import { classifyDatabaseError } from '../database-errors';
import { PrismaService } from '../prisma.service';
import { ApplicationScope, SubscriptionRecord } from '../records';

const SELECT = { eventType: true, ensureDelivery: true, active: true } as const;
const DEFAULT_FLAGS = { ensureDelivery: false, active: true };

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
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
