import { IdPrefix, idPattern } from '@herald/core';
import pg from 'pg';

/** Crockford's base32, lowercase: the alphabet of a ULID as Herald writes it. */
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/** SQL for the `chars` low 5-bit groups of the bigint `value`, most significant first. */
function base32Sql(value: string, chars: number): string {
  return Array.from({ length: chars }, (_, i) => `substr('${CROCKFORD}', (((${value}) >> ${5 * (chars - 1 - i)}) & 31)::int + 1, 1)`).join(
    ' || ',
  );
}

/** SQL for 16 characters (80 bits) derived from the text `seed`: the random part of a ULID, reproducible. */
function randomPartSql(seed: string): string {
  const bits40 = (salt: number) => `(hashtextextended(${seed}, ${salt}) & 1099511627775)`;
  return `${base32Sql(bits40(1), 8)} || ${base32Sql(bits40(2), 8)}`;
}

/**
 * Inserts `count` events for one application in one INSERT … SELECT generate_series, shaped as
 * Herald publishes them: ids `evt_` + a lowercase ULID whose time is the event's created_at (so
 * they are time-ordered like UlidIdGenerator's), created `stepMs` apart from `fromMs` on.
 * Returns the statement's row count.
 */
export async function seedEvents(
  client: pg.Client,
  options: { applicationId: number; count: number; fromMs: number; stepMs: number; tag: string },
): Promise<number> {
  const result = await client.query(
    `INSERT INTO events (id, application_id, event_type, payload, created_at)
     SELECT 'evt_' || ${base32Sql('s.ms', 10)} || ${randomPartSql(`$5::text || g`)},
            $1, 'acw_start',
            '{"call_id":"c-' || g || '","agent_id":"a-' || g % 97 || '","queue":"support-eu","seconds":' || g % 300 || '}',
            to_timestamp(s.ms / 1000.0)
       FROM generate_series(0, $2::int - 1) g,
            LATERAL (SELECT $3::bigint + g * $4::bigint AS ms) s`,
    [options.applicationId, options.count, options.fromMs, options.stepMs, options.tag],
  );
  return result.rowCount ?? 0;
}

/**
 * One delivery for each event of the application (or each `every`-th), as the publish path
 * makes them: id `dlv_` + a ULID of the event's millisecond, created with the event, `status`
 * after `attemptCount` attempts (none pending: no next attempt). Returns the row count.
 */
export async function seedDeliveries(
  client: pg.Client,
  options: { applicationId: number; status: 'failed' | 'succeeded'; attemptCount: number; every?: number },
): Promise<number> {
  const result = await client.query(
    `INSERT INTO deliveries (id, event_id, application_id, event_type, status, attempt_count, next_attempt_at, created_at, updated_at)
     SELECT 'dlv_' || substr(e.id, 5, 10) || ${randomPartSql(`'dlv' || e.id`)},
            e.id, e.application_id, e.event_type, $2::delivery_status, $3, NULL, e.created_at, e.created_at + interval '31 minutes'
       FROM events e
      WHERE e.application_id = $1 AND hashtext(e.id) % $4::int = 0`,
    [options.applicationId, options.status, options.attemptCount, options.every ?? 1],
  );
  return result.rowCount ?? 0;
}

/** Fails loudly unless every id in `table` has the shape Herald's own generator gives `prefix` (core's idPattern). */
export async function assertHeraldIds(client: pg.Client, table: 'events' | 'deliveries', prefix: IdPrefix): Promise<void> {
  const pattern = idPattern(prefix).source;
  const { rows } = await client.query<{ bad: string; example: string | null }>(
    `SELECT count(*) AS bad, min(id) AS example FROM ${table} WHERE id !~ $1`,
    [pattern],
  );
  if (Number(rows[0].bad) > 0) throw new Error(`${rows[0].bad} seeded ${table} ids do not match ${pattern}, e.g. ${rows[0].example}`);
}

/** After a bulk seed: fresh statistics and visibility map, and no checkpoint left to land inside a measurement. */
export async function settleTables(client: pg.Client, tables: string[]): Promise<void> {
  for (const table of tables) await client.query(`VACUUM ANALYZE ${table}`);
  await client.query('CHECKPOINT');
}

/**
 * One attempt for each delivery of the application (or `number` attempts each), as the worker
 * records them: started when the delivery was created, a 200
 * (or, for failed deliveries, a 500) with a short excerpt and the headers that were sent.
 * Returns the row count.
 */
export async function seedAttempts(client: pg.Client, options: { applicationId: number; number?: number }): Promise<number> {
  const result = await client.query(
    `INSERT INTO delivery_attempts (delivery_id, number, started_at, duration_ms, url, response_status, response_excerpt, request_headers)
     SELECT d.id, n, d.created_at + (n - 1) * interval '30 seconds', 12 + n, 'http://127.0.0.1/hook',
            CASE WHEN d.status = 'failed' THEN 500 ELSE 200 END, 'ok',
            ('{"content-type":"application/json","user-agent":"Herald-Webhooks/0.1","webhook-id":"' || d.event_id || '"}')::json
       FROM deliveries d, generate_series(1, $2::int) n
      WHERE d.application_id = $1`,
    [options.applicationId, options.number ?? 1],
  );
  return result.rowCount ?? 0;
}

/**
 * `count` deliveries (with their events) due now, spread over the applications round-robin, in
 * one statement: a backlog as after an outage. Ids are `evt_<tag>_<n>` / `dlv_<tag>_<n>`.
 */
export async function insertDueBacklog(databaseUrl: string, applicationIds: number[], count: number, tag: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `WITH ev AS (
         INSERT INTO events (id, application_id, event_type, payload, created_at)
         SELECT 'evt_' || $3::text || '_' || g, ($1::int[])[1 + g % cardinality($1::int[])], 'acw_start', '{"call_id":"c-' || g || '"}', now()
           FROM generate_series(1, $2::int) g
         RETURNING id, application_id)
       , dl AS (
         INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
         SELECT replace(id, 'evt_', 'dlv_'), id, application_id, 'acw_start', 'pending', now(), now(), now() FROM ev
         RETURNING id, application_id)
       INSERT INTO delivery_queue (delivery_id, application_id, due_at) SELECT id, application_id, now() FROM dl`,
      [applicationIds, count, tag],
    );
  } finally {
    await client.end();
  }
}
