import { HeraldConfig } from '@herald/core';
import { DatabaseModule } from '@herald/database';
import { HeraldRuntimeModule } from '@herald/runtime';
import { DynamicModule, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AdminModule } from './admin/admin.module';
import { ApplicationListModule } from './applications/application-list.module';
import { AuditModule } from './audit/audit.module';
import { ApiKeyGuard } from './common/auth/api-key.guard';
import { CommonModule } from './common/common.module';
import { ConsoleModule } from './console/console.module';
import { DeliveryLogModule } from './delivery-log/delivery-log.module';
import { ErrorCodeModule } from './error-codes/error-code.module';
import { EventTypeModule } from './event-types/event-type.module';
import { EventModule } from './events/event.module';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { SubscriptionModule } from './subscriptions/subscription.module';
import { WebhookModule } from './webhooks/webhook.module';
import { WebhookHealthModule } from './webhook-health/webhook-health.module';
import { OperationalWebhookModule } from './operational-webhook/operational-webhook.module';
import { PortalLinkModule } from './portal-links/portal-link.module';
import { StatisticsModule } from './statistics/statistics.module';

@Module({})
export class AppModule {
  static forRoot(config: HeraldConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        HeraldRuntimeModule.forRoot(config, { service: 'herald-api', database: DatabaseModule }),
        CommonModule,
        HealthModule,
        MetricsModule,
        ErrorCodeModule,
        EventTypeModule,
        WebhookModule,
        WebhookHealthModule,
        OperationalWebhookModule,
        SubscriptionModule,
        EventModule,
        DeliveryLogModule,
        AdminModule,
        ApplicationListModule,
        PortalLinkModule,
        AuditModule,
        StatisticsModule,
        ConsoleModule,
      ],
      providers: [{ provide: APP_GUARD, useClass: ApiKeyGuard }],
    };
  }
}
