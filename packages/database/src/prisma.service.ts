import { StartupError } from '@herald/core';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/prisma/client';

export const DATABASE_OPTIONS = Symbol('DATABASE_OPTIONS');

export interface DatabaseOptions {
  url: string;
  poolSize: number;
}

/** Connecting is the only wait a request may spend on an unreachable database before it gets 503. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * The Prisma client, on our own `pg` pool so that pool size and connect timeout are ours.
 * Connects at start-up and fails loudly if it cannot: a process without its database is useless.
 * Only repositories use it.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleInit, OnApplicationShutdown {
  private readonly pool: pg.Pool;
  private readonly where: string;

  constructor(@Inject(DATABASE_OPTIONS) options: DatabaseOptions) {
    const pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    // An idle connection the server drops (restart, failover, pg_terminate_backend) is re-emitted
    // by the pool as 'error'; unheard, that event would crash the process. The pool replaces it.
    pool.on('error', (error) => new Logger(PrismaService.name).warn(`idle database connection lost: ${error.message}`));
    super({ adapter: new PrismaPg(pool) });
    this.pool = pool;
    this.where = describeServer(options.url);
  }

  /**
   * A statement on the same pool, without Prisma's query engine: for the few hot statements the
   * repositories run per event and per attempt, where that engine cost most of the time (bench/).
   */
  async sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
    return (await this.pool.query<T>(text, values)).rows;
  }

  async onModuleInit(): Promise<void> {
    try {
      await this.$queryRaw`SELECT 1`;
    } catch (error) {
      const reason = (error as Error).message.split('\n').filter(Boolean).pop();
      throw new StartupError(`Cannot reach the database at ${this.where} (DATABASE_URL): ${reason}`, { cause: error });
    }
  }

  /**
   * Closed in the last shutdown phase: Nest calls onModuleDestroy before
   * beforeApplicationShutdown, where the worker lets attempts in flight record their results
   * (and the api finishes its requests), so the pool must outlive both.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
    await this.pool.end();
  }
}

/** host:port/database, never the credentials a connection string may carry. */
function describeServer(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
  } catch {
    return 'the configured server';
  }
}
