import { DynamicModule, Module } from '@nestjs/common';
import { DeliveryNotifier } from './notifications/delivery-notifier';
import { DATABASE_OPTIONS, DatabaseOptions, PgPool } from './pg-pool';
import { PrismaService } from './prisma.service';
import { AccountRepository } from './configuration/account.repository';
import { AuditLogRepository } from './audit/audit-log.repository';
import { ApiKeyRepository } from './configuration/api-key.repository';
import { ApplicationRepository } from './configuration/application.repository';
import { DeliveryLogRepository } from './events/delivery-log.repository';
import { DeliveryQueueRepository } from './queue/delivery-queue.repository';
import { EventRepository } from './events/event.repository';
import { EventLogRepository } from './events/event-log.repository';
import { EventTypeRepository } from './configuration/event-type.repository';
import { HealthRepository } from './housekeeping/health.repository';
import { PortalLinkRepository } from './configuration/portal-link.repository';
import { StatisticsRepository } from './statistics/statistics.repository';
import { SubscriptionRepository } from './configuration/subscription.repository';
import { WebhookRepository } from './configuration/webhook.repository';
import { WebhookHealthRepository } from './queue/webhook-health.repository';
import { OperationalWebhookRepository } from './events/operational-webhook.repository';
import { WebhookThrottleRepository } from './queue/webhook-throttle.repository';

const REPOSITORIES = [
  AccountRepository,
  AuditLogRepository,
  ApiKeyRepository,
  ApplicationRepository,
  DeliveryLogRepository,
  DeliveryQueueRepository,
  EventRepository,
  EventLogRepository,
  EventTypeRepository,
  HealthRepository,
  PortalLinkRepository,
  StatisticsRepository,
  SubscriptionRepository,
  WebhookRepository,
  WebhookHealthRepository,
  OperationalWebhookRepository,
  WebhookThrottleRepository,
];

/** The api's (with its pool size); the worker imports DeliveryQueueModule from '@herald/database/queue', which loads no Prisma. */
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
