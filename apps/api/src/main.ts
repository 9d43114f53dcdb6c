import './limit-heap-growth';
import 'reflect-metadata';
import { parseHeraldConfig, StartupError } from '@herald/core';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';
import { createHttpAdapter, NEST_APP_OPTIONS } from './common/http/http-adapter';
import { createLogger } from './common/logging/logger';
import { configureApp } from './configure-app';

async function main(): Promise<void> {
  // The one place the api reads the environment.
  const config = parseHeraldConfig(process.env);
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot(config),
    createHttpAdapter(createLogger(config)),
    NEST_APP_OPTIONS,
  );
  configureApp(app);
  await app.listen(config.http.port, config.http.host);
}

main().catch((error: unknown) => {
  // A configuration problem is the operator's to fix: say which variable, without a stack.
  console.error(error instanceof StartupError ? error.message : error);
  process.exit(1);
});
