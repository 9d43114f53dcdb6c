import { Injectable } from '@nestjs/common';
import { migrationNames } from '../migrations/migration-files';
import { PgPool } from '../pg-pool';

@Injectable()
export class HealthRepository {
  constructor(private readonly pg: PgPool) {}

  /** Migrations in prisma/migrations that the database has not finished applying. */
  async pendingMigrations(): Promise<string[]> {
    const applied = await this.pg.sql<{ migration_name: string }>(
      `SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const done = new Set(applied.map((row) => row.migration_name));
    return migrationNames().filter((name) => !done.has(name));
  }
}
