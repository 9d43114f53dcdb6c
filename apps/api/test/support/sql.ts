import pg from 'pg';

/** Reads what a test database holds, to assert on storage (hashes, secrets) and not only on responses. */
export async function sql<T extends pg.QueryResultRow>(databaseUrl: string, text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}
