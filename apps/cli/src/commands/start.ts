import { HeraldConfig, StartupError } from '@herald/core';
import { applyMigrations } from '@herald/database';
import { startEmbeddedDatabase } from '../embedded/embedded-database';
import { Supervisor } from '../supervisor/supervisor';
import { ensureDatabaseReachable } from './migrations';

/** Each process's pool in embedded mode; PGlite serves every connection from one backend anyway. */
const EMBEDDED_POOL_SIZE = '5';

/**
 * `herald start`: the database (PGlite under HERALD_DATA_DIR when DATABASE_URL is unset),
 * pending migrations, then the api and the worker, restarted when they die, until a signal
 * stops them or one keeps failing at start-up (see Supervisor).
 */
export async function start(config: HeraldConfig, env: NodeJS.ProcessEnv): Promise<number> {
  if (config.database.url) await ensureDatabaseReachable(config.database.url);
  const embedded = config.database.url ? null : await startEmbeddedDatabase(config.embedded.dataDir);
  const databaseUrl = embedded?.url ?? (config.database.url as string);
  try {
    const applied = await applyMigrations(databaseUrl).catch((error: Error) => {
      throw new StartupError(`Cannot apply migrations (DATABASE_URL): ${error.message}`, { cause: error });
    });
    console.log(applied.length > 0 ? `herald: applied migrations ${applied.join(', ')}` : 'herald: database schema is up to date');
    console.log(
      embedded
        ? `herald: embedded PostgreSQL (PGlite) with data under ${config.embedded.dataDir}/; set DATABASE_URL to use a server`
        : 'herald: using the PostgreSQL server in DATABASE_URL',
    );
    console.log(`herald: api on http://${config.http.host}:${config.http.port} (Swagger UI at /docs)`);

    const childEnv: NodeJS.ProcessEnv = embedded
      ? { ...env, DATABASE_URL: databaseUrl, HERALD_EMBEDDED_DATABASE: '1', HERALD_DB_POOL_SIZE: EMBEDDED_POOL_SIZE }
      : { ...env };
    const supervisor = new Supervisor();
    // Once: a second Ctrl-C (or SIGTERM) while stopping ends the supervisor at once, as it would
    // any program; the children got the first signal and are already on their way out.
    const stop = () => void supervisor.stop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    try {
      return await supervisor.run([
        { name: 'api', entry: require.resolve('@herald/api/dist/main.js'), env: childEnv },
        { name: 'worker', entry: require.resolve('@herald/worker/dist/main.js'), env: childEnv },
      ]);
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
  } finally {
    await embedded?.stop();
  }
}
