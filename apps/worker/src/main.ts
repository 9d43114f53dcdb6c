import './limit-heap-growth';
import 'reflect-metadata';
import { parseHeraldConfig, StartupError } from '@herald/core';
import { createHeraldLogger, NestPinoLogger } from '@herald/runtime';
import { NestFactory } from '@nestjs/core';
import { WorkerModule } from './worker.module';

/**
 * Starts the worker: connects to the database (PgPool fails start-up loudly if it
 * cannot), then runs until SIGTERM or SIGINT and closes its connections before exiting.
 */
async function main(): Promise<void> {
  // The one place the worker reads the environment.
  const config = parseHeraldConfig(process.env);
  // Lines go out at the end of the event-loop turn that logged them: "worker started", which the
  // operator, the benchmarks and the tests wait for, is written at once on a quiet worker.
  const logger = createHeraldLogger(config, { service: 'herald-worker' });
  const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { logger: new NestPinoLogger(logger) });
  logger.info('worker started');

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
  logger.info(`worker stopping on ${signal}`);
  await app.close();
}

main().catch((error: unknown) => {
  console.error(error instanceof StartupError ? error.message : error);
  process.exit(1);
});
