import { AppError } from '@herald/contracts';
import { Injectable } from '@nestjs/common';
import { classifyDatabaseError } from '../database-errors';
import { PrismaService } from '../prisma.service';
import { ApplicationScope } from './records';

/** Workers LISTEN here; a NOTIFY sent inside the publishing transaction arrives at commit. */
export const DELIVERY_CHANNEL = 'herald_deliveries';
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface NewEvent {
  id: string;
  eventType: string;
  /** Compact JSON text; stored and sent as is. */
  payload: string;
  createdAt: Date;
  /** Used if the event is to be delivered. */
  deliveryId: string;
  /** Test pings are delivered whether or not the application subscribes to their event. */
  ignoresSubscription: boolean;
}

export interface PublishedEventRecord {
  eventId: string;
  eventType: string;
  deliveryIds: string[];
}

@Injectable()
export class EventRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Stores the event and, when the application has a webhook and an active subscription to it,
   * its delivery — in one statement, so both commit before the caller answers, or neither does.
   */
  async publish(scope: ApplicationScope, event: NewEvent): Promise<PublishedEventRecord> {
    return this.insert(this.prisma, scope, event);
  }

  /**
   * Like publish, under an idempotency key remembered for 24 hours: the same key with the same
   * request hash answers with the first event; with another hash it is a 400-07. Concurrent
   * requests with one key serialise on the key's row.
   */
  async publishOnce(
    scope: ApplicationScope,
    event: NewEvent,
    idempotency: { key: string; requestHash: string },
  ): Promise<PublishedEventRecord & { replayed: boolean }> {
    const expiredBefore = new Date(event.createdAt.getTime() - IDEMPOTENCY_WINDOW_MS);
    return this.prisma.$transaction(async (tx) => {
      const claimed = await tx.$queryRaw<unknown[]>`
        INSERT INTO idempotency_keys AS k (application_id, key, request_hash, event_id, created_at)
        VALUES (${scope.applicationId}, ${idempotency.key}, ${idempotency.requestHash}, ${event.id}, ${event.createdAt})
        ON CONFLICT (application_id, key) DO UPDATE
          SET request_hash = excluded.request_hash, event_id = excluded.event_id, created_at = excluded.created_at
          WHERE k.created_at <= ${expiredBefore}
        RETURNING 1`;
      if (claimed.length > 0) return { ...(await this.insert(tx, scope, event)), replayed: false };

      const [first] = await tx.$queryRaw<{ request_hash: string; event_id: string }[]>`
        SELECT request_hash, event_id FROM idempotency_keys
         WHERE application_id = ${scope.applicationId} AND key = ${idempotency.key}`;
      if (first.request_hash !== idempotency.requestHash) {
        throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This idempotency key was used in the last 24 hours with a different request.', {
          details: [{ field: 'idempotency_key', message: 'already used with a different event or payload' }],
        });
      }
      const original = await tx.event.findUniqueOrThrow({
        where: { id: first.event_id },
        select: { id: true, eventType: true, deliveries: { select: { id: true }, orderBy: { id: 'asc' } } },
      });
      return {
        eventId: original.id,
        eventType: original.eventType,
        deliveryIds: original.deliveries.map((delivery) => delivery.id),
        replayed: true,
      };
    });
  }

  private async insert(
    client: Pick<PrismaService, '$queryRaw'>,
    scope: ApplicationScope,
    event: NewEvent,
  ): Promise<PublishedEventRecord> {
    const app = scope.applicationId;
    try {
      const [row] = await client.$queryRaw<{ event_id: string; delivery_id: string | null; notified: bigint }[]>`
        WITH event AS (
          INSERT INTO events (id, application_id, event_type, payload, created_at)
          VALUES (${event.id}, ${app}, ${event.eventType}, ${event.payload}, ${event.createdAt})
          RETURNING id
        ), delivery AS (
          INSERT INTO deliveries (id, event_id, application_id, event_type, status, ignores_subscription,
                                  next_attempt_at, created_at, updated_at)
          SELECT ${event.deliveryId}, (SELECT id FROM event), ${app}, ${event.eventType}, 'pending',
                 ${event.ignoresSubscription}, ${event.createdAt}, ${event.createdAt}, ${event.createdAt}
            FROM webhooks w
           WHERE w.application_id = ${app}
             AND (${event.ignoresSubscription} OR EXISTS (
                   SELECT 1 FROM subscriptions s
                    WHERE s.application_id = ${app} AND s.event_type = ${event.eventType} AND s.active))
          RETURNING id
        )
        SELECT (SELECT id FROM event) AS event_id,
               (SELECT id FROM delivery) AS delivery_id,
               (SELECT count(*) FROM (SELECT pg_notify(${DELIVERY_CHANNEL}, '') FROM delivery) AS n) AS notified`;
      return { eventId: row.event_id, eventType: event.eventType, deliveryIds: row.delivery_id ? [row.delivery_id] : [] };
    } catch (error) {
      if (classifyDatabaseError(error) === 'foreign_key_violation') {
        throw new AppError('UNKNOWN_EVENT_TYPE', `"${event.eventType}" is not an event type; GET /event_types lists them.`, {
          details: [{ field: 'event', message: `unknown event type "${event.eventType}"` }],
        });
      }
      throw error;
    }
  }
}
