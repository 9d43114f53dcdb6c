import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ensureLockfile, MIGRATIONS_DIR, readMigrationList, readSchema } from './migration-files';
import { openSchemaEngine } from './schema-engine';

const NO_FILTERS = { externalTables: [], externalEnums: [] };
/** Any constant works; it only has to be the same in every replica. */
const MIGRATION_LOCK_KEY = 72_707_369_001;
const MIGRATION_NAME = /^[a-z0-9_]{1,60}$/;

/** Applies pending migrations; replicas that start together wait on an advisory lock. */
export async function applyMigrations(databaseUrl: string, migrationsDir = MIGRATIONS_DIR): Promise<string[]> {
  const lock = new pg.Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const { engine, close } = await openSchemaEngine(databaseUrl, readSchema());
    try {
      const { appliedMigrationNames } = await engine.applyMigrations({
        migrationsList: readMigrationList(migrationsDir),
        filters: NO_FILTERS,
      });
      return appliedMigrationNames;
    } finally {
      await close();
    }
  } finally {
    await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await lock.end();
  }
}

/**
 * The SQL that would turn the live database into what schema.prisma describes: empty when a
 * migrated database matches the schema, so a non-empty answer means the two have drifted.
 */
export async function diffDatabaseAgainstSchema(databaseUrl: string): Promise<string | null> {
  const schema = readSchema();
  const files = [{ path: 'schema.prisma', content: schema }];
  const { engine, close } = await openSchemaEngine(databaseUrl, schema);
  try {
    const result = await engine.diff({
      from: { tag: 'schemaDatasource', files, configDir: path.dirname(MIGRATIONS_DIR) },
      to: { tag: 'schemaDatamodel', files },
      script: true,
      exitCode: true,
      filters: NO_FILTERS,
    });
    // exitCode 2 means "there is a difference" (prisma migrate diff --exit-code).
    return result.exitCode === 2 ? (result.stdout ?? '') : null;
  } finally {
    await close();
  }
}

/**
 * Writes prisma/migrations/<timestamp>_<name>/migration.sql with what schema.prisma adds to the
 * existing migrations. The engine replays those migrations in a throw-away shadow database on
 * the same server, so the connection needs CREATEDB. Returns the folder, or null when the
 * schema has no change to migrate.
 */
export async function createMigration(
  databaseUrl: string,
  name: string,
  now: Date = new Date(),
  migrationsDir = MIGRATIONS_DIR,
): Promise<string | null> {
  if (!MIGRATION_NAME.test(name)) {
    throw new Error(`migration name must be 1 to 60 of a-z, 0-9 and "_", got "${name}"`);
  }
  const schema = readSchema();
  ensureLockfile(migrationsDir);
  const { engine, close } = await openSchemaEngine(databaseUrl, schema);
  try {
    const result = await engine.diff({
      from: { tag: 'migrations', ...readMigrationList(migrationsDir) },
      to: { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: schema }] },
      script: true,
      exitCode: true,
      filters: NO_FILTERS,
    });
    if (result.exitCode !== 2 || !result.stdout) return null;
    const folder = path.join(migrationsDir, `${timestamp(now)}_${name}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, 'migration.sql'), result.stdout);
    return folder;
  } finally {
    await close();
  }
}

function timestamp(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}
