import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { applyMigrations } from '../migrations/migration-runner';

/**
 * Real PostgreSQL for tests: migrations run once into a template database per test run, and
 * each test file works in its own clone (CREATE DATABASE … TEMPLATE, a few tens of ms), so
 * files never see each other's data and nothing needs cleaning between tests.
 */
export const TEST_DATABASE_PREFIX = 'herald_test_';

export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Fails with a message a developer can act on when no PostgreSQL answers. */
export async function assertServerReachable(serverUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`Tests need PostgreSQL at ${serverUrl} (set HERALD_TEST_DATABASE_URL to use another): ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function onServer<T>(serverUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Creates and migrates this run's template; returns its name, which also prefixes its clones. */
export async function createTemplateDatabase(serverUrl: string): Promise<string> {
  const name = `${TEST_DATABASE_PREFIX}${randomBytes(5).toString('hex')}`;
  await onServer(serverUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  await applyMigrations(databaseUrl(serverUrl, name));
  return name;
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export async function cloneDatabase(serverUrl: string, template: string): Promise<TestDatabase> {
  const name = `${template}_${randomBytes(6).toString('hex')}`;
  await onServer(serverUrl, (client) => client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  return {
    name,
    url: databaseUrl(serverUrl, name),
    drop: () => dropDatabase(serverUrl, name),
  };
}

export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await onServer(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** Drops a run's template and whatever clones its files left behind (a crashed file). */
export async function dropTestDatabases(serverUrl: string, template: string): Promise<void> {
  const names = await onServer(serverUrl, async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2 ORDER BY datname DESC',
      [template, `${template}\\_%`],
    );
    return rows.map((row) => row.datname);
  });
  for (const name of names) await dropDatabase(serverUrl, name);
}
