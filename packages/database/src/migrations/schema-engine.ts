import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
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
 * The engine reads `pg_catalog` columns of PostgreSQL's internal one-byte `"char"` type when it
 * introspects a database (for drift checks and new migrations). The pg adapter refuses that
 * type; it arrives as a one-character string, so presenting it as text is exact.
 */
class CatalogReadingClient extends pg.Client {
  override query(...args: unknown[]): any {
    const relabel = (result: pg.QueryResult) => {
      for (const field of result?.fields ?? []) {
        if (field.dataTypeID === PG_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
      }
      return result;
    };
    const callbackAt = args.findIndex((arg) => typeof arg === 'function');
    if (callbackAt >= 0) {
      const callback = args[callbackAt] as (error: Error | null, result?: pg.QueryResult) => void;
      args[callbackAt] = (error: Error | null, result?: pg.QueryResult) =>
        callback(error, error ? result : relabel(result as pg.QueryResult));
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
    const pending = (super.query as (...a: unknown[]) => unknown)(...args);
    return pending instanceof Promise ? pending.then(relabel) : pending;
  }
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

/** The package is a bundler build: its JS glue expects the .wasm module to be instantiated for it. */
function loadBindings(): Promise<WasmBindings> {
  bindings ??= (async () => {
    const gluePath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
    const glue = (await import(gluePath)) as WasmBindings;
    const wasm = await readFile(path.join(path.dirname(gluePath), 'schema_engine_bg.wasm'));
    const { instance } = await WebAssembly.instantiate(wasm, { './schema_engine_bg.js': glue });
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
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2, Client: CatalogReadingClient });
  const adapter = bindMigrationAwareSqlAdapterFactory(new PrismaPg(pool));
  const engine = await SchemaEngine.new({ datamodels: [['schema.prisma', schema]] }, () => undefined, adapter);
  return {
    engine,
    async close() {
      engine.free();
      await pool.end();
    },
  };
}
