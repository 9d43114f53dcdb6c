import { createHash } from 'node:crypto';
import { Clock, CLOCK, ID_GENERATOR, IdGenerator, TEST_EVENT_TYPE } from '@herald/core';
import { AppError, Errors, MAX_PAYLOAD_BYTES, PublishedEventDto, PublishEventRequest } from '@herald/contracts';
import { ApplicationScope, EventRepository, NewEvent, PublishedEventRecord, WebhookRepository } from '@herald/database';
import { Inject, Injectable } from '@nestjs/common';

@Injectable()
export class EventService {
  constructor(
    private readonly events: EventRepository,
    private readonly webhooks: WebhookRepository,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(ID_GENERATOR) private readonly ids: IdGenerator,
  ) {}

  /** Stores the event and its delivery (when subscribed) before answering: an accepted event is never lost. */
  async publish(scope: ApplicationScope, request: PublishEventRequest): Promise<PublishedEventDto> {
    const payload = JSON.stringify(request.payload);
    if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
      throw new AppError('PAYLOAD_TOO_LARGE', `The payload is larger than ${MAX_PAYLOAD_BYTES} bytes.`, {
        details: [{ field: 'payload', message: `must be at most ${MAX_PAYLOAD_BYTES} bytes of JSON` }],
      });
    }
    const event = this.newEvent(request.event, payload, false);
    if (request.idempotency_key === undefined) return toDto(await this.events.publish(scope, event));
    const requestHash = createHash('sha256')
      .update(JSON.stringify([request.event, request.payload]))
      .digest('hex');
    return toDto(await this.events.publishOnce(scope, event, { key: request.idempotency_key, requestHash }));
  }

  /** A `webhook.test` event, delivered whether or not the application subscribes to it. */
  async sendTestEvent(scope: ApplicationScope): Promise<PublishedEventDto> {
    if (!(await this.webhooks.exists(scope))) {
      throw Errors.webhookNotConfigured(scope.applicationId);
    }
    const payload = JSON.stringify({ message: 'A test event from Herald: your endpoint is wired up.' });
    return toDto(await this.events.publish(scope, this.newEvent(TEST_EVENT_TYPE, payload, true)));
  }

  private newEvent(eventType: string, payload: string, ignoresSubscription: boolean): NewEvent {
    return {
      id: this.ids.next('evt'),
      eventType,
      payload,
      createdAt: this.clock.now(),
      deliveryId: this.ids.next('dlv'),
      ignoresSubscription,
    };
  }
}

function toDto(record: PublishedEventRecord): PublishedEventDto {
  return { id: record.eventId, event: record.eventType, deliveries: record.deliveryIds };
}
