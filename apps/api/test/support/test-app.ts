import { HeraldConfig, parseHeraldConfig } from '@herald/core';
import { cloneDatabase, TestDatabase, testServerUrl, testTemplateDatabase } from '@herald/database/testing';
import { Type } from '@nestjs/common';
import { Test, TestingModuleBuilder } from '@nestjs/testing';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { AppModule } from '../../src/app.module';
import { createHttpAdapter, NEST_APP_OPTIONS } from '../../src/common/http/http-adapter';
import { createLogger } from '../../src/common/logging/logger';
import { configureApp } from '../../src/configure-app';
import { Fixtures } from './fixtures';

export const ADMIN_KEY = 'test-admin-key-0123456789abcdef';

export interface TestApp {
  app: NestFastifyApplication;
  http: TestAgent;
  db: TestDatabase;
  config: HeraldConfig;
  fixtures: Fixtures;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment on top of the defaults below, exactly as an operator would set it. */
  env?: NodeJS.ProcessEnv;
  /** Swap a provider, e.g. to make one fail unexpectedly. Never used for the database or HTTP. */
  override?: (builder: TestingModuleBuilder) => TestingModuleBuilder;
  /** An existing database instead of a fresh clone. */
  databaseUrl?: string;
  /** Controllers beside the app's own (a test's probe of the wiring). */
  controllers?: Type[];
  /** Runs after configureApp, before init (a test's addition to the wiring). */
  beforeInit?: (app: NestFastifyApplication) => void;
}

/** Boots the production app wiring on its own cloned database. */
export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const db = options.databaseUrl
    ? { name: 'given', url: options.databaseUrl, drop: async () => undefined }
    : await cloneDatabase(testServerUrl(), testTemplateDatabase());
  const config = parseHeraldConfig({
    DATABASE_URL: db.url,
    HERALD_ADMIN_KEY: ADMIN_KEY,
    HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
    HERALD_LOG_LEVEL: 'silent',
    HERALD_DB_POOL_SIZE: '4',
    // The limiter runs on every request, but high enough that fixtures never trip it;
    // rate-limit.e2e-spec.ts sets real limits.
    HERALD_RATE_LIMIT_PER_SECOND: '1000000',
    HERALD_RATE_LIMIT_BURST: '1000000',
    ...options.env,
  });
  const builder = Test.createTestingModule({ imports: [AppModule.forRoot(config)], controllers: options.controllers ?? [] });
  const moduleRef = await (options.override ? options.override(builder) : builder).compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(createHttpAdapter(createLogger(config)), NEST_APP_OPTIONS);
  configureApp(app);
  options.beforeInit?.(app);
  try {
    await app.init();
  } catch (error) {
    await app.close().catch(() => undefined);
    await db.drop();
    throw error;
  }
  await app.getHttpAdapter().getInstance().ready();
  const http = request(app.getHttpServer());
  return {
    app,
    http,
    db,
    config,
    fixtures: new Fixtures(http),
    async close() {
      await app.close();
      await db.drop();
    },
  };
}
