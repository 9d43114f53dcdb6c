import { HeraldConfig, StartupError } from '@herald/core';
import { applyMigrations, createMigration, describeServer, diffDatabaseAgainstSchema, MIGRATIONS_DIR, PgPool } from '@herald/database';
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
  await ensureDatabaseReachable(config.database.url);
  const folder = await createMigration(config.database.url, name);
  if (folder === null) {
    console.log(`herald: prisma/schema.prisma adds nothing to the migrations in ${MIGRATIONS_DIR}`);
    return 0;
  }
  console.log(`herald: wrote ${folder}/migration.sql; read it, then commit it`);
  return 0;
}

async function withDatabase(config: HeraldConfig, run: (url: string) => Promise<number>): Promise<number> {
  if (config.database.url) {
    await ensureDatabaseReachable(config.database.url);
    return run(config.database.url);
  }
  const embedded = await startEmbeddedDatabase(config.embedded.dataDir);
  try {
    return await run(embedded.url);
  } finally {
    await embedded.stop();
  }
}

/**
 * Connects once before the schema engine does, so a database that is missing or unreachable
 * (or refuses the role) is reported in one line naming its host — the engine's and pg's own
 * errors come with a stack and, from the engine, without saying which server it tried. The
 * probe is a PgPool, which carries the connect timeout the processes use (pg is not one of the
 * cli's runtime dependencies).
 */
export async function ensureDatabaseReachable(url: string): Promise<void> {
  const probe = new PgPool({ url, poolSize: 1 });
  try {
    await probe.onModuleInit();
  } catch (error) {
    const cause = error instanceof StartupError ? error.cause : error;
    throw new StartupError(`Cannot connect to the database at ${describeServer(url)} (DATABASE_URL): ${reasonOf(cause)}`, { cause: error });
  } finally {
    await probe.onApplicationShutdown();
  }
}

/** The problem in a few words. A host name with several addresses fails with one error per address. */
function reasonOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return [...new Set(error.errors.map(reasonOf))].join('; ');
  }
  if (error instanceof Error) return (error.message || (error as NodeJS.ErrnoException).code || error.name).split('\n')[0];
  return String(error);
}
