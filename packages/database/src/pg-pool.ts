import { StartupError } from '@herald/core';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import pg from 'pg';

export const DATABASE_OPTIONS = Symbol('DATABASE_OPTIONS');

export interface DatabaseOptions {
  url: string;
  poolSize: number;
  /**
   * Whether PreparedStatements are prepared under their names (default true). False for the
   * embedded database: pglite-socket serves every connection from one PGlite session, so the
   * second connection to prepare a name would be told it already exists (42P05). Without names
   * they run as ordinary statements.
   */
  preparedStatements?: boolean;
}

/** Connecting is the only wait a request may spend on an unreachable database before it gets 503. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * A statement on the pool, or on a transaction's connection: numbered parameters (`$1`…), the rows back.
 * Every hand-written statement in Herald runs through one of these (ARCHITECTURE.md, Data).
 */
export type SqlQuery = <T extends pg.QueryResultRow = pg.QueryResultRow>(
  text: string | PreparedStatement,
  values?: unknown[],
) => Promise<T[]>;

/**
 * A statement each connection parses once (and plans once, while PostgreSQL keeps a generic plan
 * for it), then only binds and executes: for the few
 * that run per publish and per attempt, whose parse and plan cost PostgreSQL more than running
 * them (bench/README.md). The name must be unique in the process; the text must never change
 * under it.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

export function preparedStatement(name: string, text: string): PreparedStatement {
  return { name, text };
}

function queryConfig(statement: string | PreparedStatement, values: unknown[], named: boolean): pg.QueryConfig {
  if (typeof statement === 'string') return { text: statement, values };
  return named ? { name: statement.name, text: statement.text, values } : { text: statement.text, values };
}

/**
 * A session that switches JIT compilation off before it serves any statement. Every statement
 * Herald runs reads a few rows by key, but a generic plan's estimates can pass jit_above_cost,
 * and compiling then cost the claim 58 ms a run for 1 ms of work (bench/README.md, issue 20).
 * SETs once connected, not startup options (connection poolers such as PgBouncer refuse
 * those), and awaited inside connect, so no statement of the pool's runs before them. A server
 * that refuses them keeps its own settings. The embedded database has no JIT. `settings` are
 * further SET statements of the session (DedicatedSessionOptions), the code's constants.
 */
type ConnectCallback = ((err: Error) => void) | ((err: null, client: pg.Client) => void);

function sessionClient(settings: readonly string[]): typeof pg.Client {
  const statements = ['SET jit = off', ...settings];
  return class SessionClient extends pg.Client {
    override connect(): Promise<pg.Client>;
    override connect(callback: ConnectCallback): void;
    override connect(callback?: ConnectCallback): Promise<pg.Client> | void {
      const ready = super.connect().then(async () => {
        // One at a time: sent together they are one transaction, and a refusal would undo the others.
        for (const statement of statements) {
          await this.query(statement).catch((error: Error) =>
            new Logger(PgPool.name).warn(`could not set up a session (${statement}): ${error.message}`),
          );
        }
        return this;
      });
      if (!callback) return ready;
      // pg-pool connects with a callback.
      ready.then(
        (client) => (callback as (err: null, client: pg.Client) => void)(null, client),
        (error: Error) => (callback as (err: Error) => void)(error),
      );
    }
  };
}

/** How a connection of dedicatedSql's is set up. */
export interface DedicatedSessionOptions {
  /**
   * Plan every prepared statement of the session once, for any values (plan_cache_mode =
   * force_generic_plan), instead of PostgreSQL's choice: for a session whose statements name
   * their rows by key and as arrays, so that a plan made for one set of values serves all.
   */
  genericPlans?: boolean;
}

/**
 * The process's one `pg` pool: Prisma runs on it (PrismaService), and every hand-written
 * statement runs on it directly (`sql`, `transaction`), the few run per event and per attempt
 * among them, where Prisma's query engine cost most of the time (bench/). The worker uses only
 * this, so it never loads Prisma (the largest part of the api's resident memory).
 * Connects at start-up and fails loudly if it cannot: a process without its database is useless.
 */
@Injectable()
export class PgPool implements OnModuleInit, OnApplicationShutdown {
  readonly pool: pg.Pool;
  /** One statement in its own transaction. A property, so it can be handed on like a transaction's. */
  readonly sql: SqlQuery;
  private readonly where: string;
  private readonly named: boolean;
  private readonly options: DatabaseOptions;
  /** The one-connection pools of `dedicatedSql`, by purpose, made on first use. */
  private readonly dedicated = new Map<string, { pool: pg.Pool; sql: SqlQuery }>();

  constructor(@Inject(DATABASE_OPTIONS) options: DatabaseOptions) {
    this.options = options;
    this.named = options.preparedStatements ?? true;
    this.pool = this.newPool(options.poolSize);
    this.where = describeServer(options.url);
    this.sql = this.sqlOn(this.pool);
  }

  /**
   * Statements, each its own transaction, on one connection kept for `purpose` alone (a pool of
   * one, beside the main pool, made on first use; its statements wait for each other). For a
   * prepared statement whose planning costs more than its run, that one session's cached plan
   * serves them all: PostgreSQL plans a prepared statement afresh for its first five runs in
   * each session, and again after every ANALYZE of a table it reads. The claim's planning is
   * about 3 ms against 2 ms for running it; spread over the ten connections of the worker's pool,
   * those warm-ups were half of all claims in a fresh database's first minute (bench/README.md,
   * "Issue 20, seventh sitting"). Without named statements (the embedded database) nothing is
   * cached, and this is the main pool.
   */
  dedicatedSql(purpose: string, { genericPlans = false }: DedicatedSessionOptions = {}): SqlQuery {
    if (!this.named) return this.sql;
    let dedicated = this.dedicated.get(purpose);
    if (dedicated === undefined) {
      // Never closed for idleness (pg's default closes a connection idle for 10 s): a new
      // session would plan the claim afresh again. Shutdown closes it.
      const pool = this.newPool(1, { idleTimeoutMillis: 0 }, genericPlans ? ['SET plan_cache_mode = force_generic_plan'] : []);
      dedicated = { pool, sql: this.sqlOn(pool) };
      this.dedicated.set(purpose, dedicated);
    }
    return dedicated.sql;
  }

  private newPool(max: number, settings: pg.PoolConfig = {}, sessionSettings: readonly string[] = []): pg.Pool {
    const pool = new pg.Pool({
      ...settings,
      connectionString: this.options.url,
      max,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      ...(this.named ? { Client: sessionClient(sessionSettings) } : {}),
    });
    // An idle connection the server drops (restart, failover, pg_terminate_backend) is re-emitted
    // by the pool as 'error'; unheard, that event would crash the process. The pool replaces it.
    pool.on('error', (error) => new Logger(PgPool.name).warn(`idle database connection lost: ${error.message}`));
    return pool;
  }

  /**
   * Runs `work` between BEGIN and COMMIT on one pooled connection; its statements go through the
   * `sql` it is given. Whatever `work` throws rolls the transaction back and is rethrown. A
   * connection that failed on the way is destroyed rather than returned to the pool.
   */
  transaction<R>(work: (sql: SqlQuery) => Promise<R>): Promise<R> {
    return this.onConnection(async (client, connection) => {
      try {
        await client.query('BEGIN');
        const result = await work(this.sqlOn(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        if (!connection.broken) await client.query('ROLLBACK').catch((rollbackFailed: Error) => (connection.broken = rollbackFailed));
        throw error;
      }
    });
  }

  /**
   * One statement, with the notices PostgreSQL sent while it ran (their messages): a maintenance
   * statement reports what it skipped only so (ANALYZE of a table the role does not own).
   */
  sqlWithNotices<T extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values: unknown[] = [],
  ): Promise<{ rows: T[]; notices: string[] }> {
    return this.onConnection(async (client) => {
      const notices: string[] = [];
      const onNotice = (notice: { message?: string }) => notices.push(notice.message ?? String(notice));
      client.on('notice', onNotice);
      try {
        const { rows } = await client.query<T>(text, values);
        return { rows, notices };
      } finally {
        client.off('notice', onNotice);
      }
    });
  }

  /**
   * Runs `work` on one pooled connection while it holds the session-level advisory lock `key`:
   * for jobs one process at a time should do (retention), whichever process gets there first.
   * Resolves null without running `work` when another session holds the lock. Each statement
   * `work` sends commits on its own (no transaction), on the connection that holds the lock — so
   * it works on the embedded database's single connection too.
   */
  whileHoldingLock<R>(key: number, work: (sql: SqlQuery) => Promise<R>): Promise<R | null> {
    return this.onConnection(async (client, connection) => {
      const [{ locked }] = (await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key])).rows;
      if (!locked) return null;
      try {
        return await work(this.sqlOn(client));
      } finally {
        // A connection whose unlock failed still holds the lock: destroyed, which releases it.
        if (!connection.broken)
          await client.query('SELECT pg_advisory_unlock($1)', [key]).catch((unlockFailed: Error) => (connection.broken = unlockFailed));
      }
    });
  }

  /**
   * Runs `work` on one checked-out connection, then returns the connection to the pool, or
   * destroys it when it failed on the way: its server dropped it (the client's 'error', which
   * unheard would crash the process), or `work` marked it `broken` (a rollback or an unlock that
   * failed).
   */
  private async onConnection<R>(work: (client: pg.PoolClient, connection: { broken?: Error }) => Promise<R>): Promise<R> {
    const client = await this.pool.connect();
    const connection: { broken?: Error } = {};
    const onError = (error: Error) => (connection.broken ??= error);
    client.on('error', onError);
    try {
      return await work(client, connection);
    } finally {
      client.off('error', onError);
      client.release(connection.broken ?? false);
    }
  }

  /** Statements on the pool (each its own transaction) or on one checked-out connection. */
  private sqlOn(runner: pg.Pool | pg.PoolClient): SqlQuery {
    return async <T extends pg.QueryResultRow>(text: string | PreparedStatement, values: unknown[] = []) =>
      (await runner.query<T>(queryConfig(text, values, this.named))).rows;
  }

  async onModuleInit(): Promise<void> {
    try {
      await this.pool.query('SELECT 1');
    } catch (error) {
      const reason = (error as Error).message || (error as Error).name;
      throw new StartupError(`Cannot reach the database at ${this.where} (DATABASE_URL): ${reason}`, { cause: error });
    }
  }

  /**
   * Closed in the last shutdown phase: Nest calls onModuleDestroy before
   * beforeApplicationShutdown, where the worker lets attempts in flight record their results
   * (and the api finishes its requests), so the pool must outlive both.
   */
  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.pool.end(), ...[...this.dedicated.values()].map(({ pool }) => pool.end())]);
  }
}

/** host:port/database, never the credentials a connection string may carry. */
export function describeServer(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
  } catch {
    return 'the configured server';
  }
}
