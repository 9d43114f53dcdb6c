import { Clock, CLOCK, isIdOf, sentRequestHeaders } from '@herald/core';
import {
  AppError,
  quoteInput,
  DEFAULT_PAGE_SIZE,
  DeliveryCountsDto,
  DeliveryCountsQuery,
  DeliveryDto,
  DeliveryLogEntryDto,
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

  async list(scope: ApplicationScope, query: DeliveryQuery): Promise<Page<DeliveryLogEntryDto>> {
    const page = await this.deliveries.list(
      scope,
      { status: query.status, eventType: query.event, ...timeRange(query) },
      query.limit ?? DEFAULT_PAGE_SIZE,
      query.cursor ?? null,
    );
    const last = await this.deliveries.lastAttempts(
      scope,
      page.items.filter((delivery) => delivery.attemptCount > 0).map((delivery) => delivery.id),
    );
    const items = page.items.map((delivery): DeliveryLogEntryDto => {
      const attempt = last.get(delivery.id);
      return {
        ...toSummary(delivery),
        last_attempt: attempt
          ? { started_at: attempt.startedAt.toISOString(), response_status: attempt.responseStatus, error: attempt.error }
          : null,
      };
    });
    return { items, nextCursor: page.nextCursor };
  }

  async counts(scope: ApplicationScope, query: DeliveryCountsQuery): Promise<DeliveryCountsDto> {
    const found = await this.deliveries.countByStatus(scope, { eventType: query.event, ...timeRange(query) });
    const counts = {
      pending: found.pending ?? 0,
      sending: found.sending ?? 0,
      paused: found.paused ?? 0,
      succeeded: found.succeeded ?? 0,
      failed: found.failed ?? 0,
      cancelled: found.cancelled ?? 0,
    };
    return { ...counts, total: Object.values(counts).reduce((sum, n) => sum + n, 0) };
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
        request_headers: attempt.requestHeaders && sentRequestHeaders(attempt.requestHeaders, delivery.eventId, attempt.startedAt),
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

/** The log's optional [since, until) window, as dates. */
function timeRange(query: { since?: string; until?: string }): { since?: Date; until?: Date } {
  return {
    ...(query.since === undefined ? {} : { since: new Date(query.since) }),
    ...(query.until === undefined ? {} : { until: new Date(query.until) }),
  };
}

function notFound(scope: ApplicationScope, id: string): AppError {
  return new AppError('DELIVERY_NOT_FOUND', `Application ${scope.applicationId} has no delivery ${quoteInput(id)}.`);
}
