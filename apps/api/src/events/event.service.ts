import {
  Clock,
  CLOCK,
  ID_GENERATOR,
  idempotencyRequestHash,
  IdGenerator,
  isIdOf,
  isOperationalEventType,
  repeatedKeyOutcome,
  TEST_EVENT_TYPE,
} from '@herald/core';
import {
  AppError,
  DEFAULT_PAGE_SIZE,
  ErrorDetail,
  Errors,
  EventDto,
  EventQuery,
  EventSummaryDto,
  MAX_PAYLOAD_BYTES,
  MAX_SCHEMA_MISMATCH_DETAILS,
  PublishedEventDto,
  PublishEventBatchRequest,
  PublishEventRequest,
  quoteInput,
} from '@herald/contracts';
import {
  ApplicationScope,
  EventLogRepository,
  EventRepository,
  IdempotencyClaim,
  NewEvent,
  Page,
  PublishedEventRecord,
  PublishResult,
  StoredEventRecord,
  WebhookRepository,
} from '@herald/database';
import { HeraldTracing, PublishSpan, RequestSpan, TRACING } from '@herald/runtime';
import { Inject, Injectable } from '@nestjs/common';
import { EventTypeSchemas } from '../event-types/event-type-schemas';
import { asDetails } from '../event-types/event-type.service';
import { SubscriptionFilters } from '../subscriptions/subscription-filters';

@Injectable()
export class EventService {
  constructor(
    private readonly events: EventRepository,
    private readonly eventLog: EventLogRepository,
    private readonly webhooks: WebhookRepository,
    private readonly schemas: EventTypeSchemas,
    private readonly filters: SubscriptionFilters,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
    @Inject(TRACING) private readonly tracing: HeraldTracing,
  ) {}

  /**
   * Stores the event and its delivery (when subscribed, and the subscription's filter passes the
   * payload) before answering: an accepted event is never lost. Under an idempotency key already
   * held, the same request gets the first answer again and another request a 400-07 (core's
   * repeatedKeyOutcome).
   */
  async publish(scope: ApplicationScope, request: PublishEventRequest, trace: RequestSpan | null = null): Promise<PublishedEventDto> {
    if (!this.tracing.enabled) return this.publishOne(scope, request, null);
    const span = this.tracing.startPublish(trace, { applicationId: scope.applicationId, eventTypes: [request.event] });
    return endPublish(span, this.publishOne(scope, request, span.storedContext));
  }

  private async publishOne(scope: ApplicationScope, request: PublishEventRequest, traceContext: string | null): Promise<PublishedEventDto> {
    const event = this.toNewEvent(request, '', traceContext);
    const mismatch = await this.schemaMismatch(request, '');
    if (mismatch) throw schemaMismatchError([mismatch]);
    event.filteredOut = !(await this.filters.passes(scope, request.event, request.payload));
    const idempotency = claimOf(request);
    return toDto(answerOf(await this.events.publish(scope, event, idempotency), event, idempotency, ''));
  }

  /**
   * A batch (PRODUCT.md §5.1): all of it stored in one transaction before answering, or nothing.
   * A key reused with another request (also earlier in the batch) fails the whole batch, naming
   * the first such item; unknown event types fail it naming every one.
   */
  async publishBatch(
    scope: ApplicationScope,
    request: PublishEventBatchRequest,
    trace: RequestSpan | null = null,
  ): Promise<PublishedEventDto[]> {
    if (!this.tracing.enabled) return this.publishMany(scope, request, null);
    const span = this.tracing.startPublish(trace, { applicationId: scope.applicationId, eventTypes: request.events.map((e) => e.event) });
    return endPublish(span, this.publishMany(scope, request, span.storedContext));
  }

  private async publishMany(
    scope: ApplicationScope,
    request: PublishEventBatchRequest,
    traceContext: string | null,
  ): Promise<PublishedEventDto[]> {
    const items = request.events.map((item, i) => ({
      event: this.toNewEvent(item, `events[${i}].`, traceContext),
      idempotency: claimOf(item),
    }));
    // All or nothing: every item is checked before any is stored.
    const mismatches = await Promise.all(request.events.map((item, i) => this.schemaMismatch(item, `events[${i}].`)));
    const refused = mismatches.filter((mismatch) => mismatch !== null);
    if (refused.length > 0) throw schemaMismatchError(refused);
    for (let i = 0; i < items.length; i++) {
      items[i].event.filteredOut = !(await this.filters.passes(scope, request.events[i].event, request.events[i].payload));
    }
    let reusedAt = -1;
    const stored = await this.events.publishBatch(scope, items, (results) => {
      reusedAt = results.findIndex((result, i) => isReused(result, items[i].idempotency));
      return reusedAt < 0;
    });
    if (stored.kind === 'refused') throw keyReused(`events[${reusedAt}].idempotency_key`);
    if (stored.kind === 'unknown_event_types') {
      const unknown = stored.indexes.map((i) => ({ type: items[i].event.eventType, field: `events[${i}].event` }));
      throw new AppError('UNKNOWN_EVENT_TYPE', Errors.unknownEventType(unknown[0].type, unknown[0].field).message, {
        details: unknown.map(({ type, field }) => ({ field, message: `unknown event type ${quoteInput(type)}` })),
      });
    }
    return stored.results.map((result, i) => toDto(answerOf(result, items[i].event, items[i].idempotency, `events[${i}].`)));
  }

  /** A publish request checked and turned into the rows to store; `field` prefixes the fields its errors name. */
  private toNewEvent(request: PublishEventRequest, field: string, traceContext: string | null): NewEvent {
    // Herald's own notices to the operator: in the catalogue table, never the platform's to publish.
    if (isOperationalEventType(request.event)) throw Errors.unknownEventType(request.event, `${field}event`);
    const payload = JSON.stringify(request.payload);
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
      throw new AppError('PAYLOAD_TOO_LARGE', `The payload is larger than ${MAX_PAYLOAD_BYTES} bytes.`, {
        details: [{ field: `${field}payload`, message: `must be at most ${MAX_PAYLOAD_BYTES} bytes of JSON` }],
      });
    }
    return this.newEvent(request.event, payload, false, request.idempotency_key ?? null, request.ordering_key ?? null, traceContext);
  }

  /**
   * What is wrong with a payload whose event type enforces its schema (PRODUCT.md §15), or null.
   * Checked in the api before the publish statement, which stays the same for every type.
   */
  private async schemaMismatch(request: PublishEventRequest, field: string): Promise<SchemaMismatch | null> {
    const validate = await this.schemas.enforcedValidator(request.event);
    const problems = validate?.(request.payload) ?? null;
    return problems ? { eventType: request.event, details: asDetails(`${field}payload`, problems) } : null;
  }

  /** A `webhook.test` event, delivered whether or not the application subscribes to it. */
  async sendTestEvent(scope: ApplicationScope, trace: RequestSpan | null = null): Promise<PublishedEventDto> {
    if (!this.tracing.enabled) return this.sendTestEventNow(scope, null);
    const span = this.tracing.startPublish(trace, { applicationId: scope.applicationId, eventTypes: [TEST_EVENT_TYPE] });
    return endPublish(span, this.sendTestEventNow(scope, span.storedContext));
  }

  private async sendTestEventNow(scope: ApplicationScope, traceContext: string | null): Promise<PublishedEventDto> {
    if (!(await this.webhooks.exists(scope))) {
      throw Errors.webhookNotConfigured(scope.applicationId);
    }
    const payload = JSON.stringify({ message: 'A test event from Herald: your endpoint is wired up.' });
    const event = this.newEvent(TEST_EVENT_TYPE, payload, true, null, null, traceContext);
    return toDto(answerOf(await this.events.publish(scope, event), event, null, ''));
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

  /**
   * A new delivery of a stored event, under the webhook, subscription and filter as they are now
   * (exactly what a publish of it now would make).
   */
  async replay(scope: ApplicationScope, id: string): Promise<PublishedEventDto> {
    const stored = isIdOf('evt', id) ? await this.eventLog.find(scope, id) : null;
    if (!stored) throw notFound(scope, id);
    const filteredOut =
      stored.eventType !== TEST_EVENT_TYPE && !(await this.filters.passes(scope, stored.eventType, JSON.parse(stored.payload)));
    const replayed = await this.events.replay(scope, id, {
      id: this.ids.next('dlv'),
      createdAt: this.clock.now(),
      testEventType: TEST_EVENT_TYPE,
      filteredOut,
    });
    if (!replayed) throw notFound(scope, id);
    return toDto(replayed);
  }

  private newEvent(
    eventType: string,
    payload: string,
    ignoresSubscription: boolean,
    idempotencyKey: string | null,
    orderingKey: string | null,
    traceContext: string | null,
  ): NewEvent {
    return {
      id: this.ids.next('evt'),
      eventType,
      payload,
      idempotencyKey,
      orderingKey,
      createdAt: this.clock.now(),
      deliveryId: this.ids.next('dlv'),
      ignoresSubscription,
      filteredOut: false,
      traceContext,
    };
  }
}

/**
 * Ends a publish's span with what it stored (the events, and the deliveries made for them; under
 * a held idempotency key, the first publish's), or with the error's directory code.
 */
async function endPublish<T extends PublishedEventDto | PublishedEventDto[]>(span: PublishSpan, publishing: Promise<T>): Promise<T> {
  try {
    const published = await publishing;
    const all: PublishedEventDto[] = Array.isArray(published) ? published : [published];
    span.end({ eventIds: all.map((event) => event.id), deliveryIds: all.flatMap((event) => event.deliveries) });
    return published;
  } catch (error) {
    span.end({ errorType: error instanceof AppError ? error.code : error instanceof Error ? error.name : 'unknown' });
    throw error;
  }
}

interface SchemaMismatch {
  eventType: string;
  details: ErrorDetail[];
}

/** One 400-08 for a publish or a whole batch, naming at most MAX_SCHEMA_MISMATCH_DETAILS problems. */
function schemaMismatchError(mismatches: SchemaMismatch[]): AppError {
  const details = mismatches.flatMap((mismatch) => mismatch.details).slice(0, MAX_SCHEMA_MISMATCH_DETAILS);
  const first = details[0];
  return new AppError(
    'PAYLOAD_SCHEMA_MISMATCH',
    `The payload does not match the schema of event type ${quoteInput(mismatches[0].eventType)}: ${first.field} ${first.message}.`,
    { details },
  );
}

function claimOf(request: PublishEventRequest): IdempotencyClaim | null {
  return request.idempotency_key === undefined
    ? null
    : { key: request.idempotency_key, requestHash: idempotencyRequestHash(request.event, request.payload, request.ordering_key ?? null) };
}

function isReused(result: PublishResult, idempotency: IdempotencyClaim | null): boolean {
  return result.kind === 'key_taken' && repeatedKeyOutcome(result.first.requestHash, idempotency!.requestHash) === 'key_reused';
}

/** The answer to one publish; `field` prefixes the fields its errors name. */
function answerOf(result: PublishResult, event: NewEvent, idempotency: IdempotencyClaim | null, field: string): PublishedEventRecord {
  if (result.kind === 'stored') return result.record;
  if (result.kind === 'unknown_event_type') throw Errors.unknownEventType(event.eventType, `${field}event`);
  if (isReused(result, idempotency)) throw keyReused(`${field}idempotency_key`);
  return result.first.record;
}

function keyReused(field: string): AppError {
  return new AppError('IDEMPOTENCY_KEY_REUSED', 'This idempotency key was used in the last 24 hours with a different request.', {
    details: [{ field, message: 'already used with a different event or payload' }],
  });
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
    ordering_key: event.orderingKey,
    deliveries: event.deliveryIds,
  };
}

function notFound(scope: ApplicationScope, id: string): AppError {
  return new AppError('DELIVERY_NOT_FOUND', `Application ${scope.applicationId} has no event ${quoteInput(id)}.`);
}
