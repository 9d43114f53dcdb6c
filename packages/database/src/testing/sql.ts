import pg from 'pg';

export type Row = Record<string, any>;

/**
 * Reads or changes what a test database holds, over its own short-lived connection: tests
 * assert on storage (hashes, secrets, attempts), not only on answers. The one place outside
 * the repositories where tests touch PostgreSQL directly.
 */
export async function sql<T extends Row = Row>(databaseUrl: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = await openDatabase(databaseUrl);
  try {
    return await client.query<T>(text, params);
  } finally {
    await client.close();
  }
}

export interface DatabaseConnection {
  query<T extends Row = Row>(text: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** One connection a test keeps for many statements (a fuzz run's state digests). */
export async function openDatabase(databaseUrl: string): Promise<DatabaseConnection> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    query: async <T extends Row = Row>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows as T[],
    close: () => client.end(),
  };
}
