import { ok, PublishedEventResponse, PublishEventRequest } from '@herald/contracts';
import { ApplicationScope } from '@herald/database';
import { Body, HttpCode, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOperation } from '@nestjs/swagger';
import { OwnedApplication } from '../common/access/application-access.guard';
import { ApplicationController } from '../common/access/application-controller.decorator';
import { ApiErrors, BODY_ERRORS } from '../common/swagger/api-errors.decorator';
import { EventService } from './event.service';

@ApplicationController('', { tag: 'events' })
export class EventController {
  constructor(private readonly events: EventService) {}

  @Post('events')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Publish an event',
    description:
      'The event and its delivery are stored before the answer. A delivery is created when the application has a webhook and an active subscription to the event.',
  })
  @ApiAcceptedResponse({ type: PublishedEventResponse })
  @ApiErrors(...BODY_ERRORS, 'UNKNOWN_EVENT_TYPE', 'IDEMPOTENCY_KEY_REUSED')
  async publish(@OwnedApplication() scope: ApplicationScope, @Body() body: PublishEventRequest): Promise<PublishedEventResponse> {
    return ok(await this.events.publish(scope, body));
  }

  @Post('webhook/test')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send a test event',
    description: 'Publishes a `webhook.test` event, delivered whether or not the application subscribes to it.',
  })
  @ApiAcceptedResponse({ type: PublishedEventResponse })
  @ApiErrors('WEBHOOK_NOT_CONFIGURED')
  async test(@OwnedApplication() scope: ApplicationScope): Promise<PublishedEventResponse> {
    return ok(await this.events.sendTestEvent(scope));
  }
}
