import 'reflect-metadata';
import { StartupError } from '@herald/core';
import { NestFactory } from '@nestjs/core';
import { Logger } from 'nestjs-pino';
import { loadConfig } from './config/load-config';
import { WorkerModule } from './worker.module';

/**
 * Starts the worker: connects to the database (PgPool fails start-up loudly if it
 * cannot), then runs until SIGTERM or SIGINT and closes its connections before exiting.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { bufferLogs: true });
  const logger = app.get(Logger);
  app.useLogger(logger);
  logger.log('worker started');

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    // Signal listeners do not keep Node alive; this timer does until a signal arrives.
    const keepAlive = setInterval(() => undefined, 60_000);
    const stop = (received: NodeJS.Signals) => {
      clearInterval(keepAlive);
      resolve(received);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  logger.log(`worker stopping on ${signal}`);
  await app.close();
}

main().catch((error: unknown) => {
  console.error(error instanceof StartupError ? error.message : error);
  process.exit(1);
});
