import 'reflect-metadata';
import {
  CLOCK,
  Clock,
  HERALD_CONFIG,
  HeraldConfig,
  ID_GENERATOR,
  IdGenerator,
  idPattern,
  parseHeraldConfig,
  StartupError,
} from '@herald/core';
import { DynamicModule, Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HeraldRuntimeModule } from './herald-runtime.module';
import { HeraldService } from './herald-service';

const DATABASE = Symbol('DATABASE');

/** Stands in for @herald/database's modules: records what it was given. */
@Module({})
class RecordingDatabaseModule {
  static forRoot(options: { url: string; poolSize: number; preparedStatements: boolean }): DynamicModule {
    return { module: RecordingDatabaseModule, global: true, providers: [{ provide: DATABASE, useValue: options }], exports: [DATABASE] };
  }
}

/** A provider in a module of its own, as the apps' services are. */
@Injectable()
class Consumer {
  constructor(
    @Inject(HERALD_CONFIG) readonly config: unknown,
    @Inject(CLOCK) readonly clock: Clock,
    @Inject(ID_GENERATOR) readonly ids: IdGenerator,
    @Inject(DATABASE) readonly database: unknown,
  ) {}
}

@Module({ providers: [Consumer] })
class ConsumerModule {}

describe('HeraldRuntimeModule', () => {
  /** What a module of a process built on HeraldRuntimeModule with `config` is given. */
  async function consumerOf(config: HeraldConfig, service: HeraldService): Promise<{ consumer: Consumer; close: () => Promise<void> }> {
    @Module({ imports: [HeraldRuntimeModule.forRoot(config, { service, database: RecordingDatabaseModule }), ConsumerModule] })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    return { consumer: app.get(Consumer), close: () => app.close() };
  }

  it('gives every module the configuration, the clock, ids and the database', async () => {
    const config = parseHeraldConfig({ DATABASE_URL: 'postgresql://herald@127.0.0.1:5432/herald', HERALD_DB_POOL_SIZE: '3' });
    const { consumer, close } = await consumerOf(config, 'herald-worker');
    try {
      expect(consumer.config).toBe(config);
      expect(consumer.database).toEqual({ url: 'postgresql://herald@127.0.0.1:5432/herald', poolSize: 3, preparedStatements: true });
      expect(consumer.clock.now()).toBeInstanceOf(Date);
      expect(consumer.ids.next('evt')).toMatch(idPattern('evt'));
    } finally {
      await close();
    }
  });

  it('turns named prepared statements off on the embedded database (one session serves every connection)', async () => {
    const config = parseHeraldConfig({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:5433/postgres', HERALD_EMBEDDED_DATABASE: 'true' });
    const { consumer, close } = await consumerOf(config, 'herald-api');
    try {
      expect(consumer.database).toMatchObject({ preparedStatements: false });
    } finally {
      await close();
    }
  });

  it('refuses to start without DATABASE_URL, naming the variable and the process', () => {
    const config = parseHeraldConfig({});
    const start = () => HeraldRuntimeModule.forRoot(config, { service: 'herald-api', database: RecordingDatabaseModule });
    expect(start).toThrow(StartupError);
    expect(start).toThrow(/^DATABASE_URL is not set: herald-api needs a PostgreSQL server/);
  });
});
