import { DynamicModule, Module } from '@nestjs/common';
import { DeliveryNotifier } from './notifications/delivery-notifier';
import { DATABASE_OPTIONS, DatabaseOptions, PgPool } from './pg-pool';
import { PrismaService } from './prisma.service';
import { AccountRepository } from './repositories/account.repository';
import { ApiKeyRepository } from './repositories/api-key.repository';
import { ApplicationRepository } from './repositories/application.repository';
import { DeliveryLogRepository } from './repositories/delivery-log.repository';
import { DeliveryQueueRepository } from './repositories/delivery-queue.repository';
import { EventRepository } from './repositories/event.repository';
import { EventLogRepository } from './repositories/event-log.repository';
import { EventTypeRepository } from './repositories/event-type.repository';
import { HealthRepository } from './repositories/health.repository';
import { PortalLinkRepository } from './repositories/portal-link.repository';
import { SubscriptionRepository } from './repositories/subscription.repository';
import { WebhookRepository } from './repositories/webhook.repository';
import { WebhookHealthRepository } from './repositories/webhook-health.repository';
import { OperationalWebhookRepository } from './repositories/operational-webhook.repository';
import { WebhookThrottleRepository } from './repositories/webhook-throttle.repository';

const REPOSITORIES = [
  AccountRepository,
  ApiKeyRepository,
  ApplicationRepository,
  DeliveryLogRepository,
  DeliveryQueueRepository,
  EventRepository,
  EventLogRepository,
  EventTypeRepository,
  HealthRepository,
  PortalLinkRepository,
  SubscriptionRepository,
  WebhookRepository,
  WebhookHealthRepository,
  OperationalWebhookRepository,
  WebhookThrottleRepository,
];

/** The api and the worker each import this with their own pool size. */
@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseOptions): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [{ provide: DATABASE_OPTIONS, useValue: options }, PgPool, PrismaService, DeliveryNotifier, ...REPOSITORIES],
      exports: [PgPool, PrismaService, DeliveryNotifier, ...REPOSITORIES],
    };
  }
}
