import { migrationNames } from '../migrations/migration-files';
import { PgPool } from '../pg-pool';
import { cloneDatabase, TestDatabase } from '../testing/test-databases';
import { testServerUrl, testTemplateDatabase } from '../testing/config/test-server';
import { sql } from '../testing/sql';
import { HealthRepository } from './health.repository';

/**
 * The readiness check's statement against a cloned (migrated) database: which of the repository's
 * migrations the database has not finished applying, as `_prisma_migrations` records them.
 */
describe('HealthRepository', () => {
  let db: TestDatabase;
  let pool: PgPool;
  let health: HealthRepository;

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    pool = new PgPool({ url: db.url, poolSize: 1 });
    health = new HealthRepository(pool);
  });
  afterAll(async () => {
    await pool.onApplicationShutdown();
    await db.drop();
  });

  it('names no migration for a database migrated to the end, and those missing, unfinished or rolled back otherwise', async () => {
    const names = migrationNames();
    expect(names.length).toBeGreaterThan(2);
    expect(await health.pendingMigrations()).toEqual([]);

    const [first, second, third] = names;
    await sql(db.url, 'DELETE FROM _prisma_migrations WHERE migration_name = $1', [first]);
    await sql(db.url, 'UPDATE _prisma_migrations SET finished_at = NULL WHERE migration_name = $1', [second]);
    await sql(db.url, 'UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = $1', [third]);

    expect(await health.pendingMigrations()).toEqual([first, second, third]);
  });
});
