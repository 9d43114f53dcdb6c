/**
 * What the worker needs, and nothing that loads Prisma or the API contracts: import it as
 * `@herald/database/queue`. The package's main entry loads the generated Prisma client,
 * a large share of resident memory the worker has no use for.
 */
import { DynamicModule, Module } from '@nestjs/common';
import { DATABASE_OPTIONS, DatabaseOptions, PgPool } from './pg-pool';
import { DeliveryQueueRepository } from './repositories/delivery-queue.repository';
import { RetentionRepository } from './repositories/retention.repository';

export * from './notifications/channel-listener';
export { DELIVERY_CHANNEL } from './notifications/delivery-channel';
export * from './pg-pool';
export * from './repositories/delivery-queue.repository';
export * from './repositories/retention.repository';
export type { WebhookRecord } from './repositories/records';

/** The pool, the delivery queue and retention, for the worker. */
@Module({})
export class DeliveryQueueModule {
  static forRoot(options: DatabaseOptions): DynamicModule {
    return {
      module: DeliveryQueueModule,
      global: true,
      providers: [{ provide: DATABASE_OPTIONS, useValue: options }, PgPool, DeliveryQueueRepository, RetentionRepository],
      exports: [PgPool, DeliveryQueueRepository, RetentionRepository],
    };
  }
}
