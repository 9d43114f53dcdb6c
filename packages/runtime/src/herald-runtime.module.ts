import { CLOCK, HERALD_CONFIG, HeraldConfig, ID_GENERATOR, IdGenerator, StartupError, systemClock, UlidIdGenerator } from '@herald/core';
import { DynamicModule, Inject, Injectable, Module, OnApplicationShutdown } from '@nestjs/common';
import { HeraldService } from './herald-service';
import { HeraldTracing, startTracing, TRACING } from './tracing/tracing';

/** The `forRoot` of one of `@herald/database`'s modules. */
export interface DatabaseModuleFactory {
  forRoot(options: { url: string; poolSize: number; preparedStatements: boolean }): DynamicModule;
}

export interface HeraldRuntimeOptions {
  service: HeraldService;
  /**
   * The process's database module: `DatabaseModule` for the api (Prisma and the pool), and
   * `DeliveryQueueModule` from `@herald/database/queue` for the worker, which must never load
   * Prisma. The process chooses, so this package imports neither.
   */
  database: DatabaseModuleFactory;
}

/**
 * Exports the spans still waiting as the process stops: Nest calls this after the api's server
 * has closed and the worker's attempts have drained (both end in earlier shutdown phases).
 */
@Injectable()
export class TracingShutdown implements OnApplicationShutdown {
  constructor(@Inject(TRACING) private readonly tracing: HeraldTracing) {}

  async onApplicationShutdown(): Promise<void> {
    await this.tracing.shutdown();
  }
}

/**
 * What every Herald process runs on, for all of its modules: the configuration parsed once at
 * start-up (main.ts), the clock and the id generator (injected, so tests can fix time and ids),
 * the database connection, and the traces (NO_TRACING unless an OTLP endpoint is configured).
 */
@Module({})
export class HeraldRuntimeModule {
  static forRoot(config: HeraldConfig, { service, database }: HeraldRuntimeOptions): DynamicModule {
    const url = config.database.url;
    if (!url) {
      // Only the cli may run without one: `herald start` serves the embedded database and hands its URL on.
      throw new StartupError(
        `DATABASE_URL is not set: ${service} needs a PostgreSQL server; \`pnpm start\` sets it to the embedded database when you have none.`,
      );
    }
    return {
      module: HeraldRuntimeModule,
      global: true,
      // The embedded database serves every connection from one session: no named statements there (PgPool).
      imports: [database.forRoot({ url, poolSize: config.database.poolSize, preparedStatements: !config.database.embedded })],
      providers: [
        { provide: HERALD_CONFIG, useValue: config },
        { provide: CLOCK, useValue: systemClock },
        { provide: ID_GENERATOR, useFactory: (): IdGenerator => new UlidIdGenerator() },
        { provide: TRACING, useFactory: (): Promise<HeraldTracing> => startTracing(config.tracing, service) },
        TracingShutdown,
      ],
      exports: [HERALD_CONFIG, CLOCK, ID_GENERATOR, TRACING],
    };
  }
}
