import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { MigrationList } from '@prisma/schema-engine-wasm';

/** The repository's prisma/ folder; the same relative place in a checkout and in the images. */
export const PRISMA_DIR = path.resolve(__dirname, '../../../../prisma');
export const MIGRATIONS_DIR = path.join(PRISMA_DIR, 'migrations');
export const SCHEMA_PATH = path.join(PRISMA_DIR, 'schema.prisma');
const LOCKFILE = 'migration_lock.toml';

export function readSchema(): string {
  return readFileSync(SCHEMA_PATH, 'utf8');
}

/** Migration folder names, oldest first (Prisma's `<timestamp>_<name>` layout). */
export function migrationNames(dir = MIGRATIONS_DIR): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(dir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort();
}

export function readMigrationList(dir = MIGRATIONS_DIR): MigrationList {
  const lockPath = path.join(dir, LOCKFILE);
  return {
    baseDir: dir,
    lockfile: { path: LOCKFILE, content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories: migrationNames(dir).map((name) => ({
      path: name,
      migrationFile: {
        path: 'migration.sql',
        content: { tag: 'ok' as const, value: readFileSync(path.join(dir, name, 'migration.sql'), 'utf8') },
      },
    })),
  };
}
