import { Module } from '@nestjs/common';
import { WebhookThrottleController } from './webhook-throttle.controller';
import { WebhookThrottleService } from './webhook-throttle.service';
import { WebhookController } from './webhook.controller';
import { WebhookService } from './webhook.service';

@Module({ controllers: [WebhookController, WebhookThrottleController], providers: [WebhookService, WebhookThrottleService] })
export class WebhookModule {}
