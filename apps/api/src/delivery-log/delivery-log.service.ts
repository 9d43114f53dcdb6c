import { Clock, CLOCK, isIdOf } from '@herald/core';
import {
  AppError,
  quoteInput,
  DEFAULT_PAGE_SIZE,
  DeliveryDto,
  DeliveryQuery,
  DeliverySummaryDto,
  RecoverDeliveriesRequest,
  RecoverResultDto,
} from '@herald/contracts';
import { ApplicationScope, DeliveryLogRepository, DeliveryRecord, Page } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';

@Injectable()
export class DeliveryLogService {
  constructor(
    private readonly deliveries: DeliveryLogRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async list(scope: ApplicationScope, query: DeliveryQuery): Promise<Page<DeliverySummaryDto>> {
    const page = await this.deliveries.list(
      scope,
      { status: query.status, eventType: query.event },
      query.limit ?? DEFAULT_PAGE_SIZE,
      query.cursor ?? null,
    );
    return { items: page.items.map(toSummary), nextCursor: page.nextCursor };
  }

  async get(scope: ApplicationScope, id: string): Promise<DeliveryDto> {
    const delivery = isIdOf('dlv', id) ? await this.deliveries.find(scope, id) : null;
    if (!delivery) throw notFound(scope, id);
    return {
      ...toSummary(delivery),
      attempts: delivery.attempts.map((attempt) => ({
        number: attempt.number,
        started_at: attempt.startedAt.toISOString(),
        duration_ms: attempt.durationMs,
        url: attempt.url,
        response_status: attempt.responseStatus,
        response_excerpt: attempt.responseExcerpt,
        error: attempt.error,
        next_attempt_at: attempt.nextAttemptAt?.toISOString() ?? null,
        request_headers: attempt.requestHeaders,
      })),
    };
  }

  /** One attempt now for every failed delivery created in [since, until). */
  async recover(scope: ApplicationScope, request: RecoverDeliveriesRequest): Promise<RecoverResultDto> {
    const now = this.clock.now();
    const since = new Date(request.since);
    const until = request.until === undefined ? now : new Date(request.until);
    if (until.getTime() <= since.getTime()) {
      throw new AppError('VALIDATION_FAILED', `until (${until.toISOString()}) must be later than since (${since.toISOString()}).`, {
        details: [{ field: 'until', message: 'must be later than since' }],
      });
    }
    return { requeued: await this.deliveries.recover(scope, { since, until, eventType: request.event }, now) };
  }

  /** One attempt now, for any delivery but a cancelled one (or one whose attempt is in flight). */
  async retry(scope: ApplicationScope, id: string): Promise<DeliverySummaryDto> {
    const requested = isIdOf('dlv', id) ? await this.deliveries.requestAttempt(scope, id, this.clock.now()) : null;
    if (!requested) throw notFound(scope, id);
    if (requested.before === 'cancelled') {
      throw new AppError('CONFLICT', `Delivery ${id} was cancelled; publish the event again to send it.`);
    }
    if (requested.before === 'paused') {
      throw new AppError(
        'CONFLICT',
        `Delivery ${id} is paused while the webhook is disabled; POST /application/${scope.applicationId}/webhook/enable resumes it.`,
      );
    }
    if (requested.before === 'sending') {
      throw new AppError('CONFLICT', `An attempt of delivery ${id} is in flight; its result will be in the log within seconds.`);
    }
    return toSummary(requested.after);
  }
}

function toSummary(delivery: DeliveryRecord): DeliverySummaryDto {
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    event: delivery.eventType,
    status: delivery.status,
    created_at: delivery.createdAt.toISOString(),
    attempt_count: delivery.attemptCount,
    next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
  };
}

function notFound(scope: ApplicationScope, id: string): AppError {
  return new AppError('DELIVERY_NOT_FOUND', `Application ${scope.applicationId} has no delivery ${quoteInput(id)}.`);
}
