import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cloneDatabase, databaseUrl, dropDatabase, sql, TestDatabase, testServerUrl, testTemplateDatabase } from '@herald/database/testing';
import { runCli } from './support/run-cli';

const rows = (url: string, text: string) => sql(url, text);

describe('migrations through the wasm schema engine', () => {
  describe('on PostgreSQL', () => {
    let migrated: TestDatabase;
    beforeAll(async () => {
      migrated = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    });
    afterAll(() => migrated.drop());

    it('a migrated database has no drift from prisma/schema.prisma', async () => {
      const result = await runCli(['migrate', '--check'], { DATABASE_URL: migrated.url });
      expect(result.stdout).toContain('matches prisma/schema.prisma');
      expect(result.code).toBe(0);
    });

    it('makes every table logged: none is emptied by a database crash or missing on a standby (issue 20)', async () => {
      const persistence = await rows(
        migrated.url,
        "SELECT relname, relpersistence FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'i') ORDER BY relname",
      );
      expect(persistence.map((row) => row.relname)).toEqual(expect.arrayContaining(['endpoint_claims', 'delivery_queue', 'deliveries']));
      expect(persistence.filter((row) => row.relpersistence !== 'p')).toEqual([]);
    });

    it('--check reports drift with the SQL that would reconcile it, and fails', async () => {
      await sql(migrated.url, 'ALTER TABLE accounts ADD COLUMN nickname text');
      try {
        const result = await runCli(['migrate', '--check'], { DATABASE_URL: migrated.url });
        expect(result.code).toBe(1);
        expect(result.stderr).toMatch(/DROP COLUMN "nickname"/);
      } finally {
        await sql(migrated.url, 'ALTER TABLE accounts DROP COLUMN nickname');
      }
    });

    it('applies every migration to an empty database once, under its advisory lock', async () => {
      const name = `${testTemplateDatabase()}_empty`;
      await sql(testServerUrl(), `CREATE DATABASE "${name}"`);
      const url = databaseUrl(testServerUrl(), name);
      try {
        const [first, second] = await Promise.all([runCli(['migrate'], { DATABASE_URL: url }), runCli(['migrate'], { DATABASE_URL: url })]);
        expect([first.code, second.code]).toEqual([0, 0]);
        const outputs = [first.stdout, second.stdout].sort();
        expect(outputs[0]).toMatch(/applied \d{14}_init/);
        expect(outputs[1]).toMatch(/nothing to apply/);
        expect((await runCli(['migrate', '--check'], { DATABASE_URL: url })).code).toBe(0);
      } finally {
        await dropDatabase(testServerUrl(), name);
      }
    });

    it('writes a new migration from the schema (here: all of it, against an empty history), touching no real database', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'herald-migrations-'));
      const name = `${testTemplateDatabase()}_target`;
      await sql(testServerUrl(), `CREATE DATABASE "${name}"`);
      const target = databaseUrl(testServerUrl(), name);
      try {
        // In a child process: the engine's glue is an ES module, which jest's module system cannot load.
        const script = `require(${JSON.stringify(require.resolve('@herald/database'))})
          .createMigration(${JSON.stringify(target)}, 'probe', new Date('2026-01-02T03:04:05Z'), ${JSON.stringify(dir)})
          .then((folder) => console.log(folder))`;
        const folder = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim();
        expect(path.basename(folder)).toBe('20260102030405_probe');
        const sqlText = readFileSync(path.join(folder, 'migration.sql'), 'utf8');
        expect(sqlText).toContain('CREATE TABLE "webhooks"');
        expect(sqlText).toContain('CREATE TYPE "backoff_type"');
        expect(readdirSync(dir).sort()).toEqual(['20260102030405_probe', 'migration_lock.toml']);
        // The replay ran in a throw-away shadow database, which is gone again.
        expect(await rows(target, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).toEqual([]);
        expect(await rows(testServerUrl(), "SELECT datname FROM pg_database WHERE datname LIKE 'herald_shadow_%'")).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
        await dropDatabase(testServerUrl(), name);
      }
    });

    it('refuses to write a migration without a server for the shadow database', async () => {
      const result = await runCli(['migration', 'new', 'nothing'], {});
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/DATABASE_URL/);
    });
  });

  describe('on the embedded database (PGlite)', () => {
    it('applies the migrations and then shows no drift', async () => {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'herald-pglite-'));
      try {
        const applied = await runCli(['migrate'], { HERALD_DATA_DIR: dataDir });
        expect(applied.code).toBe(0);
        expect(applied.stdout).toMatch(/applied \d{14}_init/);
        const check = await runCli(['migrate', '--check'], { HERALD_DATA_DIR: dataDir });
        expect(check.stdout).toContain('matches prisma/schema.prisma');
        expect(check.code).toBe(0);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
});
