import {
  EventListResponse,
  EventQuery,
  EventResponse,
  ok,
  page,
  PublishedEventBatchResponse,
  PublishedEventResponse,
  PublishEventBatchRequest,
  PublishEventRequest,
} from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import type { RequestSpan } from '@herald/runtime';
import { Body, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { RefusesPortalTokens } from '../common/auth/auth.decorators';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { ApiErrors, BODY_ERRORS } from '../common/swagger/api-errors.decorator';
import { RequestTrace } from '../common/tracing/request-tracing';
import { EventService } from './event.service';

const EVENT_PARAM = { name: 'event_id', example: 'evt_01jd8x6q3k2m4n5p6r7s8t9v0w' };

@ApplicationController('', { tag: 'events' })
export class EventController {
  constructor(private readonly events: EventService) {}

  // Publishing is the platform's, never its customer's: a portal link that could publish would
  // send correctly signed events to the customer's receiver and take the platform's idempotency keys.
  @Post('events')
  @RefusesPortalTokens()
  @HttpCode(202)
  @ApiOperation({
    summary: 'Publish an event',
    description:
      'The event and its delivery are stored before the answer. A delivery is created when the application has a webhook and an active subscription to the event.',
  })
  @ApiAcceptedResponse({ type: PublishedEventResponse })
  @ApiErrors(...BODY_ERRORS, 'UNKNOWN_EVENT_TYPE', 'IDEMPOTENCY_KEY_REUSED')
  async publish(
    @OwnedApplication() scope: ApplicationScope,
    @Body() body: PublishEventRequest,
    @RequestTrace() trace: RequestSpan | null,
  ): Promise<PublishedEventResponse> {
    return ok(await this.events.publish(scope, body, trace));
  }

  @Post('events/batch')
  @RefusesPortalTokens()
  @HttpCode(202)
  @ApiOperation({
    summary: 'Publish a batch of events',
    description:
      '1 to 1,000 events (at most 5 MiB), each as for a single publish, stored with their deliveries in one transaction before the answer: all of them or, when any item is invalid, none (the error names the item, e.g. `events[7].event`). Each idempotency key behaves as for a single publish. The answer lists the events in the order given.',
  })
  @ApiAcceptedResponse({ type: PublishedEventBatchResponse })
  @ApiErrors(...BODY_ERRORS, 'UNKNOWN_EVENT_TYPE', 'IDEMPOTENCY_KEY_REUSED')
  async publishBatch(
    @OwnedApplication() scope: ApplicationScope,
    @Body() body: PublishEventBatchRequest,
    @RequestTrace() trace: RequestSpan | null,
  ): Promise<PublishedEventBatchResponse> {
    return ok(await this.events.publishBatch(scope, body, trace));
  }

  @Get('events')
  @ApiOperation({
    summary: 'List events',
    description:
      'Newest first, optionally of one event type, paged with a cursor; each with the ids of its deliveries. Payloads are in GET …/events/{event_id}.',
  })
  @ApiOkResponse({ type: EventListResponse })
  async list(@OwnedApplication() scope: ApplicationScope, @Query() query: EventQuery): Promise<EventListResponse> {
    const found = await this.events.list(scope, query);
    return page(found.items, found.nextCursor);
  }

  @Get('events/:event_id')
  @ApiOperation({ summary: 'Read an event back', description: 'With its payload as stored and the ids of its deliveries.' })
  @ApiParam(EVENT_PARAM)
  @ApiOkResponse({ type: EventResponse })
  @ApiErrors('DELIVERY_NOT_FOUND')
  async get(@OwnedApplication() scope: ApplicationScope, @Param('event_id') id: string): Promise<EventResponse> {
    return ok(await this.events.get(scope, id));
  }

  @Post('events/:event_id/replay')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Replay an event',
    description:
      "A new delivery of the stored event under today's webhook and subscription, as if it were published now (none when the application has no webhook or no active subscription to it). Same body as publishing.",
  })
  @ApiParam(EVENT_PARAM)
  @ApiAcceptedResponse({ type: PublishedEventResponse })
  @ApiErrors('DELIVERY_NOT_FOUND')
  async replay(@OwnedApplication() scope: ApplicationScope, @Param('event_id') id: string): Promise<PublishedEventResponse> {
    return ok(await this.events.replay(scope, id));
  }

  @Post('webhook/test')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send a test event',
    description: 'Publishes a `webhook.test` event, delivered whether or not the application subscribes to it.',
  })
  @ApiAcceptedResponse({ type: PublishedEventResponse })
  @ApiErrors('WEBHOOK_NOT_CONFIGURED')
  async test(@OwnedApplication() scope: ApplicationScope, @RequestTrace() trace: RequestSpan | null): Promise<PublishedEventResponse> {
    return ok(await this.events.sendTestEvent(scope, trace));
  }
}
