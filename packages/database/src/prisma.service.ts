import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/prisma/client';
import { PgPool } from './pg-pool';

/**
 * The Prisma client, on the process's PgPool so that pool size and connect timeout are ours
 * (PgPool checks the connection at start-up and closes the pool last). Only repositories use it.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnApplicationShutdown {
  constructor(pgPool: PgPool) {
    super({ adapter: new PrismaPg(pgPool.pool) });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.$disconnect();
  }
}
