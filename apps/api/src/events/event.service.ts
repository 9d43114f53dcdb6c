import { createHash } from 'node:crypto';
import { Clock, CLOCK, ID_GENERATOR, IdGenerator, isIdOf, isOperationalEventType, TEST_EVENT_TYPE } from '@herald/core';
import {
  AppError,
  DEFAULT_PAGE_SIZE,
  Errors,
  EventDto,
  EventQuery,
  EventSummaryDto,
  MAX_PAYLOAD_BYTES,
  PublishedEventDto,
  PublishEventBatchRequest,
  PublishEventRequest,
  quoteInput,
} from '@herald/contracts';
import {
  ApplicationScope,
  EventLogRepository,
  EventRepository,
  NewEvent,
  Page,
  PublishedEventRecord,
  StoredEventRecord,
  WebhookRepository,
} from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';

@Injectable()
export class EventService {
  constructor(
    private readonly events: EventRepository,
    private readonly eventLog: EventLogRepository,
    private readonly webhooks: WebhookRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  /** Stores the event and its delivery (when subscribed) before answering: an accepted event is never lost. */
  async publish(scope: ApplicationScope, request: PublishEventRequest): Promise<PublishedEventDto> {
    const event = this.toNewEvent(request, '');
    if (request.idempotency_key === undefined) return toDto(await this.events.publish(scope, event));
    return toDto(await this.events.publishOnce(scope, event, { key: request.idempotency_key, requestHash: requestHash(request) }));
  }

  /** A batch (PRODUCT.md §5.1): all of it stored in one transaction before answering, or nothing. */
  async publishBatch(scope: ApplicationScope, request: PublishEventBatchRequest): Promise<PublishedEventDto[]> {
    const items = request.events.map((item, i) => {
      const event = this.toNewEvent(item, `events[${i}].`);
      const idempotency = item.idempotency_key === undefined ? null : { key: item.idempotency_key, requestHash: requestHash(item) };
      return { event, idempotency };
    });
    return (await this.events.publishBatch(scope, items)).map(toDto);
  }

  /** A publish request checked and turned into the rows to store; `field` prefixes the fields its errors name. */
  private toNewEvent(request: PublishEventRequest, field: string): NewEvent {
    // Herald's own notices to the operator: in the catalogue table, never the platform's to publish.
    if (isOperationalEventType(request.event)) throw Errors.unknownEventType(request.event, `${field}event`);
    const payload = JSON.stringify(request.payload);
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
      throw new AppError('PAYLOAD_TOO_LARGE', `The payload is larger than ${MAX_PAYLOAD_BYTES} bytes.`, {
        details: [{ field: `${field}payload`, message: `must be at most ${MAX_PAYLOAD_BYTES} bytes of JSON` }],
      });
    }
    return this.newEvent(request.event, payload, false, request.idempotency_key ?? null);
  }

  /** A `webhook.test` event, delivered whether or not the application subscribes to it. */
  async sendTestEvent(scope: ApplicationScope): Promise<PublishedEventDto> {
    if (!(await this.webhooks.exists(scope))) {
      throw Errors.webhookNotConfigured(scope.applicationId);
    }
    const payload = JSON.stringify({ message: 'A test event from Herald: your endpoint is wired up.' });
    return toDto(await this.events.publish(scope, this.newEvent(TEST_EVENT_TYPE, payload, true, null)));
  }

  async list(scope: ApplicationScope, query: EventQuery): Promise<Page<EventSummaryDto>> {
    const found = await this.eventLog.list(
      scope,
      { eventType: query.event, idempotencyKey: query.idempotency_key },
      query.limit ?? DEFAULT_PAGE_SIZE,
      query.cursor ?? null,
    );
    return { items: found.items.map(toSummary), nextCursor: found.nextCursor };
  }

  async get(scope: ApplicationScope, id: string): Promise<EventDto> {
    const event = isIdOf('evt', id) ? await this.eventLog.find(scope, id) : null;
    if (!event) throw notFound(scope, id);
    return { ...toSummary(event), payload: JSON.parse(event.payload) as Record<string, unknown> };
  }

  /** A new delivery of a stored event, under the webhook and subscription as they are now. */
  async replay(scope: ApplicationScope, id: string): Promise<PublishedEventDto> {
    const replayed = isIdOf('evt', id)
      ? await this.events.replay(scope, id, { id: this.ids.next('dlv'), createdAt: this.clock.now(), testEventType: TEST_EVENT_TYPE })
      : null;
    if (!replayed) throw notFound(scope, id);
    return toDto(replayed);
  }

  private newEvent(eventType: string, payload: string, ignoresSubscription: boolean, idempotencyKey: string | null): NewEvent {
    return {
      id: this.ids.next('evt'),
      eventType,
      payload,
      idempotencyKey,
      createdAt: this.clock.now(),
      deliveryId: this.ids.next('dlv'),
      ignoresSubscription,
    };
  }
}

/** What an idempotency key remembers of a request: the same key with another hash is 400-07. */
function requestHash(request: PublishEventRequest): string {
  return createHash('sha256')
    .update(JSON.stringify([request.event, request.payload]))
    .digest('hex');
}

function toDto(record: PublishedEventRecord): PublishedEventDto {
  return { id: record.eventId, event: record.eventType, deliveries: record.deliveryIds };
}

function toSummary(event: Omit<StoredEventRecord, 'payload'>): EventSummaryDto {
  return {
    id: event.id,
    event: event.eventType,
    created_at: event.createdAt.toISOString(),
    idempotency_key: event.idempotencyKey,
    deliveries: event.deliveryIds,
  };
}

function notFound(scope: ApplicationScope, id: string): AppError {
  return new AppError('DELIVERY_NOT_FOUND', `Application ${scope.applicationId} has no event ${quoteInput(id)}.`);
}
