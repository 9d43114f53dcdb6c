import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PrismaService } from '../prisma.service';
import { DELIVERY_CHANNEL } from '../notifications/delivery-notifier';
import { ApplicationScope, DeliveryAttemptRecord, Page } from './records';

export type DeliveryStatus = 'pending' | 'sending' | 'succeeded' | 'failed' | 'cancelled';

export interface DeliveryRecord {
  id: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  createdAt: Date;
}

const SUMMARY = {
  id: true,
  eventId: true,
  eventType: true,
  status: true,
  attemptCount: true,
  nextAttemptAt: true,
  createdAt: true,
} as const;

/** The api's side of deliveries: the log, manual retries and cancellation. */
@Injectable()
export class DeliveryLogRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Newest first; the cursor is the last id of the previous page (ids are time-ordered). */
  async list(
    scope: ApplicationScope,
    filter: { status?: DeliveryStatus; eventType?: string },
    limit: number,
    before: string | null,
  ): Promise<Page<DeliveryRecord>> {
    const rows = await this.prisma.delivery.findMany({
      where: {
        applicationId: scope.applicationId,
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.eventType ? { eventType: filter.eventType } : {}),
        ...(before ? { id: { lt: before } } : {}),
      },
      orderBy: { id: 'desc' },
      take: limit + 1,
      select: SUMMARY,
    });
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? items[items.length - 1].id : null };
  }

  async find(scope: ApplicationScope, id: string): Promise<(DeliveryRecord & { attempts: DeliveryAttemptRecord[] }) | null> {
    return this.prisma.delivery.findFirst({
      where: { id, applicationId: scope.applicationId },
      select: {
        ...SUMMARY,
        attempts: {
          orderBy: { number: 'asc' },
          select: {
            number: true,
            startedAt: true,
            durationMs: true,
            url: true,
            responseStatus: true,
            responseExcerpt: true,
            error: true,
            nextAttemptAt: true,
          },
        },
      },
    });
  }

  /**
   * Asks for one attempt now. A finished (succeeded or failed) delivery gets exactly one more
   * attempt; a pending one has its next attempt brought forward and keeps its schedule after.
   * Returns the delivery as it was before, or null when there is none: the caller tells
   * 'sending' and 'cancelled' (not retried here) from success by its status.
   */
  async requestAttempt(scope: ApplicationScope, id: string, now: Date): Promise<{ before: DeliveryStatus; after: DeliveryRecord } | null> {
    return this.prisma.$transaction(async (tx) => {
      const current = await tx.$queryRaw<{ status: DeliveryStatus }[]>`
        SELECT status::text AS status FROM deliveries WHERE id = ${id} AND application_id = ${scope.applicationId} FOR UPDATE`;
      if (current.length === 0) return null;
      const before = current[0].status;
      if (before === 'pending' || before === 'succeeded' || before === 'failed') {
        await tx.$executeRaw`
          UPDATE deliveries
             SET status = 'pending', next_attempt_at = ${now}, updated_at = ${now},
                 manual_attempt = ${before !== 'pending'}
           WHERE id = ${id}`;
        await tx.$queryRaw`SELECT pg_notify(${DELIVERY_CHANNEL}, '')::text`;
      }
      const after = await tx.delivery.findUniqueOrThrow({ where: { id }, select: SUMMARY });
      return { before, after };
    });
  }

  /** Cancels what waits to be sent: every delivery of the application, or only those of one event type. */
  async cancelPending(scope: ApplicationScope, now: Date, eventType?: string): Promise<number> {
    const byType = eventType === undefined ? Prisma.empty : Prisma.sql`AND event_type = ${eventType} AND NOT ignores_subscription`;
    return this.prisma.$executeRaw`
      UPDATE deliveries SET status = 'cancelled', next_attempt_at = NULL, updated_at = ${now}
       WHERE application_id = ${scope.applicationId} AND status = 'pending' ${byType}`;
  }
}
