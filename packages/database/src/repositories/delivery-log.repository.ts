import { Injectable } from '@nestjs/common';
import { Prisma } from '../generated/prisma/client';
import { PgPool } from '../pg-pool';
import { PrismaService } from '../prisma.service';
import { DELIVERY_CHANNEL } from '../notifications/delivery-channel';
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

interface DeliveryRow {
  id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  created_at: Date;
}

function toDeliveryRecord(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    status: row.status,
    attemptCount: row.attempt_count,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
  };
}

/** The api's side of deliveries: the log, manual retries and cancellation. */
@Injectable()
export class DeliveryLogRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly pg: PgPool,
  ) {}

  /**
   * Newest first; the cursor is the last id of the previous page (ids are time-ordered). On the
   * pg pool rather than Prisma: the log is read often and in pages of up to 100 rows, and
   * Prisma's engine cost the api both time and memory here (bench/ memory: RSS peak).
   */
  async list(
    scope: ApplicationScope,
    filter: { status?: DeliveryStatus; eventType?: string },
    limit: number,
    before: string | null,
  ): Promise<Page<DeliveryRecord>> {
    const values: unknown[] = [scope.applicationId, limit + 1];
    // Only the conditions asked for, so the planner always sees one simple (application_id, id) range.
    const conditions = ['application_id = $1'];
    if (filter.status) conditions.push(`status = $${values.push(filter.status)}::delivery_status`);
    if (filter.eventType) conditions.push(`event_type = $${values.push(filter.eventType)}`);
    if (before) conditions.push(`id < $${values.push(before)}`);
    const rows = await this.pg.sql<DeliveryRow>(
      `SELECT id, event_id, event_type, status::text AS status, attempt_count, next_attempt_at, created_at
         FROM deliveries
        WHERE ${conditions.join(' AND ')}
        ORDER BY id DESC
        LIMIT $2`,
      values,
    );
    const items = rows.slice(0, limit).map(toDeliveryRecord);
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
