import { Module } from '@nestjs/common';
import { WebhookHealthController } from './webhook-health.controller';
import { WebhookHealthService } from './webhook-health.service';

/** Endpoint state (PRODUCT.md §10): GET …/webhook/status, POST …/webhook/disable and …/enable. */
@Module({ controllers: [WebhookHealthController], providers: [WebhookHealthService] })
export class WebhookHealthModule {}
