import 'reflect-metadata';
import { CLOCK, Clock, HERALD_CONFIG, ID_GENERATOR, IdGenerator, idPattern, parseHeraldConfig, StartupError } from '@herald/core';
import { DynamicModule, Inject, Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HeraldRuntimeModule } from './herald-runtime.module';

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
  it('gives every module the configuration, the clock, ids and the database', async () => {
    const config = parseHeraldConfig({ DATABASE_URL: 'postgresql://herald@127.0.0.1:5432/herald', HERALD_DB_POOL_SIZE: '3' });
    @Module({
      imports: [HeraldRuntimeModule.forRoot(config, { service: 'herald-worker', database: RecordingDatabaseModule }), ConsumerModule],
    })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    try {
      const consumer = app.get(Consumer);
      expect(consumer.config).toBe(config);
      expect(consumer.database).toEqual({ url: 'postgresql://herald@127.0.0.1:5432/herald', poolSize: 3, preparedStatements: true });
      expect(consumer.clock.now()).toBeInstanceOf(Date);
      expect(consumer.ids.next('evt')).toMatch(idPattern('evt'));
    } finally {
      await app.close();
    }
  });

  it('turns named prepared statements off on the embedded database (one session serves every connection)', async () => {
    const config = parseHeraldConfig({ DATABASE_URL: 'postgresql://postgres@127.0.0.1:5433/postgres', HERALD_EMBEDDED_DATABASE: 'true' });
    @Module({
      imports: [HeraldRuntimeModule.forRoot(config, { service: 'herald-api', database: RecordingDatabaseModule }), ConsumerModule],
    })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false });
    try {
      expect(app.get(Consumer).database).toMatchObject({ preparedStatements: false });
    } finally {
      await app.close();
    }
  });

  it('refuses to start without DATABASE_URL, naming the variable and the process', () => {
    const config = parseHeraldConfig({});
    const start = () => HeraldRuntimeModule.forRoot(config, { service: 'herald-api', database: RecordingDatabaseModule });
    expect(start).toThrow(StartupError);
    expect(start).toThrow(/^DATABASE_URL is not set: herald-api needs a PostgreSQL server/);
  });
});
