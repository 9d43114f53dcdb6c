import { HeraldConfig } from '@herald/core';
import { DatabaseModule } from '@herald/database';
import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';

@Module({})
export class WorkerModule {
  static forRoot(config: HeraldConfig): DynamicModule {
    if (!config.database.url) {
      throw new Error('The worker needs DATABASE_URL; `pnpm start` sets it to the embedded database when you have none.');
    }
    return {
      module: WorkerModule,
      imports: [
        LoggerModule.forRoot({ pinoHttp: { level: config.log.level } }),
        DatabaseModule.forRoot({ url: config.database.url, poolSize: config.database.poolSize }),
      ],
    };
  }
}
