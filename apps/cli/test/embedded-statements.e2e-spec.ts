import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PgPool, preparedStatement } from '@herald/database';

/**
 * The cli's own embedded database (dist/embedded/embedded-database.js) in a child process, as
 * `herald start` runs it: PGlite's WebAssembly loads with a dynamic import Jest's sandbox refuses.
 */
const SERVE_EMBEDDED = `
  const { startEmbeddedDatabase } = require(${JSON.stringify(path.resolve(__dirname, '../dist/embedded/embedded-database.js'))});
  startEmbeddedDatabase(process.argv[1]).then((db) => {
    console.log('url ' + db.url);
    process.once('SIGTERM', () => db.stop().then(() => process.exit(0)));
  });
`;

/**
 * The embedded database serves every connection from one PGlite session, so a statement prepared
 * under its name on one connection exists on all of them: the api's and the worker's pools run
 * their PreparedStatements unnamed there (HeraldRuntimeModule: preparedStatements false).
 */
describe('prepared statements on the embedded database', () => {
  let dataDir: string;
  let server: ChildProcess;
  let url: string;
  const statement = preparedStatement('embedded_check', 'SELECT $1::int + 1 AS next');

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'herald-pglite-statements-'));
    server = spawn(process.execPath, ['-e', SERVE_EMBEDDED, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    url = await new Promise<string>((resolve, reject) => {
      let output = '';
      server.stdout!.on('data', (chunk) => {
        output += chunk;
        const found = /^url (\S+)$/m.exec(output);
        if (found) resolve(found[1]);
      });
      server.once('exit', (code) => reject(new Error(`the embedded database exited (${code}) before it served`)));
    });
  }, 60_000);
  afterAll(async () => {
    await new Promise((resolve) => (server.once('exit', resolve), server.kill('SIGTERM')));
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** The statement on two connections of the pool at once (each held by its own transaction). */
  const onTwoConnections = (pool: PgPool) =>
    Promise.all([1, 2].map((n) => pool.transaction(async (sql) => (await sql<{ next: number }>(statement, [n]))[0].next)));

  it('runs a prepared statement on several connections when names are off', async () => {
    const pool = new PgPool({ url, poolSize: 2, preparedStatements: false });
    try {
      expect(await onTwoConnections(pool)).toEqual([2, 3]);
      expect(await onTwoConnections(pool)).toEqual([2, 3]);
    } finally {
      await pool.pool.end();
    }
  });

  it('would fail with names on: the second connection finds the name taken (why they are off here)', async () => {
    const pool = new PgPool({ url, poolSize: 2, preparedStatements: true });
    try {
      await expect(onTwoConnections(pool)).rejects.toThrow(/prepared statement "embedded_check" already exists/);
    } finally {
      await pool.pool.end();
    }
  });
});
