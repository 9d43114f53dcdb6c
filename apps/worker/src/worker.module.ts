import { CLOCK, HERALD_CONFIG, HeraldConfig, ID_GENERATOR, systemClock, UlidIdGenerator } from '@herald/core';
// Not the package's main entry: that loads Prisma, which the worker does not use.
import { DeliveryQueueModule } from '@herald/database/dist/queue';
import { DynamicModule, Global, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { DeliveryModule } from './delivery/delivery.module';
import { MetricsModule } from './metrics/metrics.module';

/** Configuration, time and ids for every module of the worker. */
@Global()
@Module({})
class WorkerFoundationModule {
  static forRoot(config: HeraldConfig): DynamicModule {
    const providers = [
      { provide: HERALD_CONFIG, useValue: config },
      { provide: CLOCK, useValue: systemClock },
      { provide: ID_GENERATOR, useFactory: () => new UlidIdGenerator() },
    ];
    return { module: WorkerFoundationModule, providers, exports: providers.map((p) => p.provide) };
  }
}

@Module({})
export class WorkerModule {
  static forRoot(config: HeraldConfig): DynamicModule {
    if (!config.database.url) {
      throw new Error('The worker needs DATABASE_URL; `pnpm start` sets it to the embedded database when you have none.');
    }
    return {
      module: WorkerModule,
      imports: [
        WorkerFoundationModule.forRoot(config),
        LoggerModule.forRoot({ pinoHttp: { level: config.log.level } }),
        DeliveryQueueModule.forRoot({ url: config.database.url, poolSize: config.database.poolSize }),
        MetricsModule,
        DeliveryModule,
      ],
    };
  }
}
