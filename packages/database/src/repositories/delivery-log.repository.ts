import type { DeliveryStatus } from '@herald/core';
import { Injectable } from '@nestjs/common';
import { PgPool } from '../pg-pool';
import { PrismaService } from '../prisma.service';
import { DELIVERY_CHANNEL } from '../notifications/delivery-channel';
import { DELIVERY_SELECT, deliveryColumns } from './delivery.sql';
import { ApplicationScope, DeliveryAttemptRecord, DeliveryRecord, Page } from './records';

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
    const rows = await this.pg.sql<DeliveryRecord>(
      `SELECT ${deliveryColumns('deliveries')}
         FROM deliveries
        WHERE ${conditions.join(' AND ')}
        ORDER BY id DESC
        LIMIT $2`,
      values,
    );
    const items = rows.slice(0, limit);
    return { items, nextCursor: rows.length > limit ? items[items.length - 1].id : null };
  }

  async find(scope: ApplicationScope, id: string): Promise<(DeliveryRecord & { attempts: DeliveryAttemptRecord[] }) | null> {
    return this.prisma.delivery.findFirst({
      where: { id, applicationId: scope.applicationId },
      select: {
        ...DELIVERY_SELECT,
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
    return this.pg.transaction(async (sql) => {
      const [current] = await sql<DeliveryRecord>(
        `SELECT ${deliveryColumns('deliveries')} FROM deliveries WHERE id = $1 AND application_id = $2 FOR UPDATE`,
        [id, scope.applicationId],
      );
      if (!current) return null;
      const before = current.status;
      if (before !== 'pending' && before !== 'succeeded' && before !== 'failed') return { before, after: current };
      const [after] = await sql<DeliveryRecord>(
        `UPDATE deliveries SET status = 'pending', next_attempt_at = $2, updated_at = $2, manual_attempt = $3
          WHERE id = $1
         RETURNING ${deliveryColumns('deliveries')}`,
        [id, now, before !== 'pending'],
      );
      await sql(`SELECT pg_notify($1, '')::text`, [DELIVERY_CHANNEL]);
      return { before, after };
    });
  }

  /** Cancels what waits to be sent: every delivery of the application, or only those of one event type. */
  async cancelPending(scope: ApplicationScope, now: Date, eventType?: string): Promise<number> {
    const { count } = await this.prisma.delivery.updateMany({
      where: {
        applicationId: scope.applicationId,
        status: 'pending',
        ...(eventType === undefined ? {} : { eventType, ignoresSubscription: false }),
      },
      data: { status: 'cancelled', nextAttemptAt: null, updatedAt: now },
    });
    return count;
  }
}
