import { PgPool, preparedStatement } from './pg-pool';
import { testServerUrl } from './testing/config/test-server';

/**
 * Against the real server, on one connection (pool size 1), so what a transaction left behind
 * shows in the next statement. A session setting made inside a transaction is undone by its
 * rollback, which is what these read.
 */
describe('PgPool.transaction', () => {
  let pool: PgPool;
  const marker = async () => (await pool.sql<{ value: string }>(`SELECT current_setting('herald.spec', true) AS value`))[0].value ?? '';

  beforeEach(() => {
    pool = new PgPool({ url: testServerUrl(), poolSize: 1 });
  });
  afterEach(async () => {
    await pool.onApplicationShutdown();
  });

  it('commits what its statements did and returns what the work returned', async () => {
    const result = await pool.transaction(async (sql) => {
      await sql(`SELECT set_config('herald.spec', 'committed', false)`);
      return (await sql<{ n: number }>('SELECT 41 + $1::int AS n', [1]))[0].n;
    });
    expect(result).toBe(42);
    expect(await marker()).toBe('committed');
  });

  it('rolls back and rethrows what the work threw, and the connection serves again', async () => {
    const thrown = new Error('refused by the caller');
    await expect(
      pool.transaction(async (sql) => {
        await sql(`SELECT set_config('herald.spec', 'rolled back', false)`);
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    expect(await marker()).toBe('');
  });

  it('rolls back after a failed statement', async () => {
    await expect(
      pool.transaction(async (sql) => {
        await sql(`SELECT set_config('herald.spec', 'rolled back', false)`);
        await sql('SELECT 1 / 0');
      }),
    ).rejects.toMatchObject({ code: '22012' });
    expect(await marker()).toBe('');
  });

  it('destroys a connection the server dropped instead of pooling it, and the process lives on', async () => {
    await expect(pool.transaction((sql) => sql('SELECT pg_terminate_backend(pg_backend_pid())'))).rejects.toThrow();
    expect(await pool.sql('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  });
});

describe('PgPool sessions', () => {
  it('run without JIT compilation on a PostgreSQL server, whatever the server’s own setting', async () => {
    const pool = new PgPool({ url: testServerUrl(), poolSize: 1 });
    try {
      expect((await pool.sql<{ jit: string }>('SHOW jit'))[0].jit).toBe('off');
    } finally {
      await pool.onApplicationShutdown();
    }
  });
});

describe('PgPool.sqlWithNotices', () => {
  it('returns the rows and the notices PostgreSQL sent with the statement, and the next statement hears none of them', async () => {
    const pool = new PgPool({ url: testServerUrl(), poolSize: 1 });
    try {
      expect(await pool.sqlWithNotices(`DO $$ BEGIN RAISE WARNING 'skipping "t"'; RAISE NOTICE 'and told so'; END $$`)).toEqual({
        rows: [],
        notices: ['skipping "t"', 'and told so'],
      });
      expect(await pool.sqlWithNotices('SELECT $1::int + 1 AS n', [41])).toEqual({ rows: [{ n: 42 }], notices: [] });
    } finally {
      await pool.onApplicationShutdown();
    }
  });
});

describe('PgPool.dedicatedSql', () => {
  const pid = async (sql: PgPool['sql']) => (await sql<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0].pid;
  const connected = async (probe: PgPool, pids: number[]) =>
    Number((await probe.sql<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE pid = ANY($1::int[])', [pids]))[0].n);

  it('runs every statement of a purpose on one connection of its own, apart from the pool, until the pool shuts down', async () => {
    const pool = new PgPool({ url: testServerUrl(), poolSize: 2 });
    const claims = pool.dedicatedSql('claims');
    let pids: number[];
    try {
      // Ten at once: they wait for each other on the one connection, which the pool never lends.
      pids = await Promise.all(Array.from({ length: 10 }, () => pid(claims)));
      expect(new Set(pids).size).toBe(1);
      expect(pool.dedicatedSql('claims')).toBe(claims);
      const pooled = await Promise.all(Array.from({ length: 4 }, () => pool.transaction((sql) => pid(sql))));
      expect(pooled).not.toContain(pids[0]);
      expect(await pid(pool.dedicatedSql('other'))).not.toBe(pids[0]);
    } finally {
      await pool.onApplicationShutdown();
    }
    const probe = new PgPool({ url: testServerUrl(), poolSize: 1 });
    try {
      const deadline = Date.now() + 5_000;
      // The server ends a backend a moment after its client said goodbye.
      while ((await connected(probe, pids)) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(await connected(probe, pids)).toBe(0);
    } finally {
      await probe.onApplicationShutdown();
    }
  });

  it('plans the prepared statements of a purpose asked so once for any values, and no other connection that way', async () => {
    const pool = new PgPool({ url: testServerUrl(), poolSize: 2 });
    const mode = async (sql: PgPool['sql']) => (await sql<{ plan_cache_mode: string }>('SHOW plan_cache_mode'))[0].plan_cache_mode;
    // What PostgreSQL keeps for a prepared statement it was asked to run: generic_plans counts
    // the runs of its generic plan, custom_plans the runs planned for their values.
    const plansOf = async (sql: PgPool['sql']) =>
      (
        await sql<{ generic_plans: string; custom_plans: string }>(
          `SELECT generic_plans::text, custom_plans::text FROM pg_prepared_statements WHERE name = 'pg_pool_spec_probe'`,
        )
      )[0];
    const probe = preparedStatement('pg_pool_spec_probe', 'SELECT count(*) AS n FROM generate_series(1, $1::int)');
    try {
      const generic = pool.dedicatedSql('generic', { genericPlans: true });
      const chosen = pool.dedicatedSql('chosen');
      expect(await mode(generic)).toBe('force_generic_plan');
      expect(await mode(chosen)).toBe('auto');
      expect(await pool.transaction((sql) => mode(sql))).toBe('auto');
      for (const n of [1, 2, 3]) {
        expect(await generic<{ n: string }>(probe, [n])).toEqual([{ n: String(n) }]);
        expect(await chosen<{ n: string }>(probe, [n])).toEqual([{ n: String(n) }]);
      }
      // The first five runs of a session are planned for their values unless generic plans are forced.
      expect(await plansOf(generic)).toEqual({ generic_plans: '3', custom_plans: '0' });
      expect(await plansOf(chosen)).toEqual({ generic_plans: '0', custom_plans: '3' });
    } finally {
      await pool.onApplicationShutdown();
    }
  });

  it('is the pool itself without named statements (the embedded database), where no plan is kept to share', async () => {
    const pool = new PgPool({ url: testServerUrl(), poolSize: 1, preparedStatements: false });
    try {
      expect(pool.dedicatedSql('claims')).toBe(pool.sql);
    } finally {
      await pool.onApplicationShutdown();
    }
  });
});
