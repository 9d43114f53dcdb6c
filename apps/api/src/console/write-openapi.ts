import 'reflect-metadata';
import { parseHeraldConfig } from '@herald/core';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { AppModule } from '../app.module';
import { createHttpAdapter, NEST_APP_OPTIONS } from '../common/http/http-adapter';
import { createLogger } from '../common/logging/logger';
import { configureApp } from '../configure-app';

/**
 * Writes the api's OpenAPI document (what /docs-json serves) to the file named on the command
 * line, without listening and without a database: the console generates its API types from it,
 * so a contract change that breaks the console fails the console's type-check.
 * Usage: node apps/api/dist/console/write-openapi.js <out.json>
 */
async function main(out: string): Promise<void> {
  // Never connected to: the pool opens connections lazily and nothing here queries.
  const config = parseHeraldConfig({ DATABASE_URL: 'postgresql://127.0.0.1:1/openapi', HERALD_LOG_LEVEL: 'silent' });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), createHttpAdapter(createLogger(config)), {
    ...NEST_APP_OPTIONS,
    logger: false,
  });
  configureApp(app);
  const fastify = app.getHttpAdapter().getInstance();
  await fastify.ready();
  const res = await fastify.inject({ method: 'GET', url: '/docs-json' });
  if (res.statusCode !== 200) throw new Error(`/docs-json answered ${res.statusCode}`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(JSON.parse(res.body), null, 2) + '\n');
  await app.close();
}

const out = process.argv[2];
if (!out) {
  console.error('usage: write-openapi <out.json>');
  process.exit(2);
}
main(path.resolve(out)).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
