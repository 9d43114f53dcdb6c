/**
 * What the worker needs, and nothing that loads Prisma or the API contracts: import it as
 * `@herald/database/queue`. The package's main entry loads the generated Prisma client,
 * a large share of resident memory the worker has no use for.
 */
import { DynamicModule, Module } from '@nestjs/common';
import { DATABASE_OPTIONS, DatabaseOptions, PgPool } from './pg-pool';
import { DeliveryQueueRepository } from './queue/delivery-queue.repository';
import { RetentionRepository } from './housekeeping/retention.repository';
import { WebhookHealthRepository } from './queue/webhook-health.repository';
import { StatisticsFoldRepository } from './statistics/statistics-fold.repository';
import { DeliveryNotifier } from './notifications/delivery-notifier';

export * from './notifications/channel-listener';
export { DELIVERY_CHANNEL } from './notifications/delivery-channel';
export * from './pg-pool';
export * from './queue/delivery-queue.repository';
export * from './housekeeping/retention.repository';
export { GrowthMarks } from './housekeeping/planner-statistics';
export * from './queue/webhook-health.repository';
export * from './statistics/statistics-fold.repository';
export type { OperationalNotice } from './events/operational-webhook.repository';
export { THROTTLE_LATE_MS } from './queue/throttle.sql';
export type { WebhookRecord } from './records';
export type { AuditEntry, AuditOf } from './audit/audit.sql';

/** The pool, the delivery queue, retention, endpoint health and statistics' folds, for the worker. */
@Module({})
export class DeliveryQueueModule {
  static forRoot(options: DatabaseOptions): DynamicModule {
    return {
      module: DeliveryQueueModule,
      global: true,
      providers: [
        { provide: DATABASE_OPTIONS, useValue: options },
        PgPool,
        DeliveryNotifier,
        DeliveryQueueRepository,
        RetentionRepository,
        WebhookHealthRepository,
        StatisticsFoldRepository,
      ],
      exports: [PgPool, DeliveryQueueRepository, RetentionRepository, WebhookHealthRepository, StatisticsFoldRepository],
    };
  }
}
