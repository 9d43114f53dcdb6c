import { HeraldConfig } from '@herald/core';
import { applyMigrations, createMigration, diffDatabaseAgainstSchema, MIGRATIONS_DIR } from '@herald/database';
import { startEmbeddedDatabase } from '../embedded/embedded-database';

/** `herald migrate [--check]`: apply pending migrations, or with --check report drift without changing anything. */
export async function migrate(config: HeraldConfig, check: boolean): Promise<number> {
  return withDatabase(config, async (url) => {
    if (check) {
      const drift = await diffDatabaseAgainstSchema(url);
      if (drift === null) {
        console.log('herald: the database matches prisma/schema.prisma');
        return 0;
      }
      console.error(`herald: the database differs from prisma/schema.prisma; this SQL would reconcile them:\n${drift}`);
      return 1;
    }
    const applied = await applyMigrations(url);
    console.log(applied.length > 0 ? `herald: applied ${applied.join(', ')}` : 'herald: nothing to apply');
    return 0;
  });
}

/**
 * `herald migration new <name>`: writes the SQL that takes the existing migrations to
 * prisma/schema.prisma. Needs a PostgreSQL server (DATABASE_URL) where it may create a
 * throw-away shadow database.
 */
export async function newMigration(config: HeraldConfig, name: string): Promise<number> {
  if (!config.database.url) {
    console.error('herald: set DATABASE_URL to a PostgreSQL server where a shadow database can be created');
    return 2;
  }
  const folder = await createMigration(config.database.url, name);
  if (folder === null) {
    console.log(`herald: prisma/schema.prisma adds nothing to the migrations in ${MIGRATIONS_DIR}`);
    return 0;
  }
  console.log(`herald: wrote ${folder}/migration.sql; read it, then commit it`);
  return 0;
}

async function withDatabase(config: HeraldConfig, run: (url: string) => Promise<number>): Promise<number> {
  if (config.database.url) return run(config.database.url);
  const embedded = await startEmbeddedDatabase(config.embedded.dataDir);
  try {
    return await run(embedded.url);
  } finally {
    await embedded.stop();
  }
}
