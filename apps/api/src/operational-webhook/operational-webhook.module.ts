import { Module } from '@nestjs/common';
import { OperationalWebhookController } from './operational-webhook.controller';
import { OperationalWebhookService } from './operational-webhook.service';

/** The operator's endpoint (PRODUCT.md §10): PUT/GET/DELETE /admin/operational_webhook and its secret. */
@Module({ controllers: [OperationalWebhookController], providers: [OperationalWebhookService] })
export class OperationalWebhookModule {}
