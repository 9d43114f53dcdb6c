import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory, ColumnTypeEnum, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { SchemaEngine } from '@prisma/schema-engine-wasm';
import pg from 'pg';

/**
 * Prisma's schema engine compiled to WebAssembly, driving PostgreSQL through the same `pg`
 * adapter the application uses. Prisma's CLI would download a native engine, which these
 * machines cannot; this runs anywhere Node runs.
 */
export type { SchemaEngine };

const PG_CHAR_OID = 18;
const PG_TEXT_OID = 25;

/**
 * The engine introspects `pg_catalog` columns of PostgreSQL's one-byte `"char"` type (constraint
 * and relation kinds). adapter-pg 7.10 refuses that type, and reporting it as text makes the
 * engine panic where it reads a character (PostgreSQL 18 lists NOT NULL constraints as
 * contype 'n'). So, for the engine's connections only, each result is passed to the adapter as
 * text and then reported to the engine as the Character column type the protocol defines.
 * This wraps adapter-pg's per-connection `performIO`/`queryRaw`, which is why adapter-pg is
 * pinned exactly; the drift test on PostgreSQL 15 and the PGlite start-up test exercise it.
 */
interface Queryable {
  queryRaw(query: object): Promise<{ columnTypes: number[] }>;
  performIO(query: object): Promise<pg.QueryResult>;
  startTransaction?(isolationLevel?: string): Promise<Queryable>;
}

function reportCharColumns<T>(connection: T): T {
  const queryable = connection as unknown as Queryable;
  const performIO = queryable.performIO.bind(queryable);
  const queryRaw = queryable.queryRaw.bind(queryable);
  const charColumnsOf = new WeakMap<object, number[]>();
  queryable.performIO = async (query) => {
    const result = await performIO(query);
    const charColumns: number[] = [];
    result.fields.forEach((field, index) => {
      if (field.dataTypeID === PG_CHAR_OID) {
        field.dataTypeID = PG_TEXT_OID;
        charColumns.push(index);
      }
    });
    if (charColumns.length > 0) charColumnsOf.set(query, charColumns);
    return result;
  };
  queryable.queryRaw = async (query) => {
    const result = await queryRaw(query);
    for (const index of charColumnsOf.get(query) ?? []) result.columnTypes[index] = ColumnTypeEnum.Character;
    return result;
  };
  if (queryable.startTransaction) {
    const startTransaction = queryable.startTransaction.bind(queryable);
    queryable.startTransaction = async (isolationLevel) => reportCharColumns(await startTransaction(isolationLevel));
  }
  return connection;
}

/**
 * The engine's adapter factory. adapter-pg would open the shadow database (where `migration new`
 * replays existing migrations) with `{ ...config, database }`, but a `connectionString` in the
 * config overrides `database` in pg, so the replay would run in the developer's own database.
 * The shadow connection is therefore made here, from the URL with its database replaced.
 */
function engineAdapterFactory(pool: pg.Pool, databaseUrl: string): SqlMigrationAwareDriverAdapterFactory {
  const base = new PrismaPg(pool);
  return {
    provider: 'postgres',
    adapterName: base.adapterName,
    connect: async () => reportCharColumns(await base.connect()),
    connectToShadowDb: async () => {
      const name = `herald_shadow_${randomBytes(8).toString('hex')}`;
      await pool.query(`CREATE DATABASE "${name}"`);
      const shadowUrl = new URL(databaseUrl);
      shadowUrl.pathname = `/${name}`;
      const shadowPool = new pg.Pool({ connectionString: shadowUrl.toString(), max: 2 });
      shadowPool.on('error', () => undefined);
      const shadow = reportCharColumns(await new PrismaPg(shadowPool).connect());
      const dispose = shadow.dispose.bind(shadow);
      shadow.dispose = async () => {
        await dispose();
        await shadowPool.end();
        await pool.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      };
      return shadow;
    },
  };
}

type WasmExports = Record<string, unknown>;

interface WasmBindings {
  SchemaEngine: typeof SchemaEngine;
  __wbg_set_wasm(exports: WasmExports): void;
}

/** Node has WebAssembly built in; TypeScript only types it in the DOM library. */
const { WebAssembly } = globalThis as unknown as {
  WebAssembly: {
    instantiate(bytes: Uint8Array, imports: Record<string, unknown>): Promise<{ instance: { exports: WasmExports } }>;
  };
};

let bindings: Promise<WasmBindings> | undefined;

/**
 * The engine arms 10-second timers to race its operations and never clears them when the
 * operation wins, which would hold a finished `herald migrate` (or a test run) open for ten
 * seconds. Its timers are unref'd: they still fire while the process lives, but never keep it.
 */
function withUnrefTimers(glue: WasmBindings): Record<string, unknown> {
  const imports: Record<string, unknown> = { ...glue };
  for (const [name, value] of Object.entries(glue)) {
    if (name.startsWith('__wbg_setTimeout_') && typeof value === 'function') {
      imports[name] = (...args: unknown[]) => {
        const timer = (value as (...a: unknown[]) => unknown)(...args);
        (timer as NodeJS.Timeout | undefined)?.unref?.();
        return timer;
      };
    }
  }
  return imports;
}

/** The package is a bundler build: its JS glue expects the .wasm module to be instantiated for it. */
function loadBindings(): Promise<WasmBindings> {
  bindings ??= (async () => {
    const gluePath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const glue = (await import(gluePath)) as WasmBindings;
    const wasm = await readFile(path.join(path.dirname(gluePath), 'schema_engine_bg.wasm'));
    const { instance } = await WebAssembly.instantiate(wasm, { './schema_engine_bg.js': withUnrefTimers(glue) });
    glue.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return glue;
  })();
  return bindings;
}

export interface OpenedSchemaEngine {
  engine: SchemaEngine;
  close(): Promise<void>;
}

export async function openSchemaEngine(databaseUrl: string, schema: string): Promise<OpenedSchemaEngine> {
  const { SchemaEngine } = await loadBindings();
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  pool.on('error', () => undefined); // an idle connection dropped by the server: the pool replaces it
  const adapter = bindMigrationAwareSqlAdapterFactory(engineAdapterFactory(pool, databaseUrl));
  const engine = await SchemaEngine.new({ datamodels: [['schema.prisma', schema]] }, () => undefined, adapter);
  return {
    engine,
    async close() {
      engine.free();
      await pool.end();
    },
  };
}
