import { HeraldConfig } from '@herald/core';
// Not the package's main entry: that loads Prisma, which the worker does not use.
import { DeliveryQueueModule } from '@herald/database/queue';
import { HeraldRuntimeModule } from '@herald/runtime';
import { DynamicModule, Module } from '@nestjs/common';
import { DeliveryModule } from './delivery/delivery.module';
import { MetricsModule } from './metrics/metrics.module';
import { AutoDisableJob } from './jobs/auto-disable-job';
import { EndpointWarningsJob } from './jobs/endpoint-warnings-job';
import { RetentionJob } from './jobs/retention-job';
import { StatisticsFoldJob } from './jobs/statistics-fold-job';

@Module({})
export class WorkerModule {
  static forRoot(config: HeraldConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        HeraldRuntimeModule.forRoot(config, { service: 'herald-worker', database: DeliveryQueueModule }),
        MetricsModule,
        DeliveryModule,
      ],
      providers: [RetentionJob, AutoDisableJob, EndpointWarningsJob, StatisticsFoldJob],
    };
  }
}
