import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * PostgreSQL in WebAssembly (PGlite), kept under `<dataDir>/pgdata` and served on a loopback
 * port so the api and the worker connect with the same `pg` adapter they use against a real
 * server. One backend serves every connection: an open transaction on one stalls the others,
 * and NOTIFY does not cross connections (the worker polls here). Fine for trying Herald on a
 * laptop; production runs on PostgreSQL.
 */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** Enough for the api's and the worker's pools (5 each in embedded mode) and the migrator. */
const MAX_CONNECTIONS = 16;

export async function startEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  const pgdata = path.resolve(dataDir, 'pgdata');
  mkdirSync(pgdata, { recursive: true });
  const db = await PGlite.create(pgdata);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: MAX_CONNECTIONS });
  await server.start();
  return {
    url: `postgresql://postgres@${server.getServerConn()}/postgres?sslmode=disable`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
