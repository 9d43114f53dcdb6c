import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PgPool, preparedStatement } from '@herald/database';
import { EmbeddedDatabase, startEmbeddedDatabase } from '../src/embedded/embedded-database';

/**
 * The embedded database serves every connection from one PGlite session, so a statement prepared
 * under its name on one connection exists on all of them: the api's and the worker's pools run
 * their PreparedStatements unnamed there (HeraldRuntimeModule: preparedStatements false).
 */
describe('prepared statements on the embedded database', () => {
  let dataDir: string;
  let embedded: EmbeddedDatabase;
  const statement = preparedStatement('embedded_check', 'SELECT $1::int + 1 AS next');

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'herald-pglite-statements-'));
    embedded = await startEmbeddedDatabase(dataDir);
  });
  afterAll(async () => {
    await embedded.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The statement on two connections of the pool at once (each held by its own transaction). */
  const onTwoConnections = (pool: PgPool) =>
    Promise.all([1, 2].map((n) => pool.transaction(async (sql) => (await sql<{ next: number }>(statement, [n]))[0].next)));

  it('runs a prepared statement on several connections when names are off', async () => {
    const pool = new PgPool({ url: embedded.url, poolSize: 2, preparedStatements: false });
    try {
      expect(await onTwoConnections(pool)).toEqual([2, 3]);
      expect(await onTwoConnections(pool)).toEqual([2, 3]);
    } finally {
      await pool.pool.end();
    }
  });

  it('would fail with names on: the second connection finds the name taken (why they are off here)', async () => {
    const pool = new PgPool({ url: embedded.url, poolSize: 2, preparedStatements: true });
    try {
      await expect(onTwoConnections(pool)).rejects.toThrow(/prepared statement "embedded_check" already exists/);
    } finally {
      await pool.pool.end();
    }
  });
});
