import { idPattern } from '@herald/core';
import pg from 'pg';
import { seedDeliveries, seedEvents } from '../src/harness/seed';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const timeOf = (id: string) => [...id.slice(4, 14)].reduce((ms, char) => ms * 32 + CROCKFORD.indexOf(char), 0);

/** The bench's SQL-seeded rows must look like Herald's own: the events list and recover page by these ids. */
describe('seeded ids', () => {
  const client = new pg.Client({
    connectionString: process.env.HERALD_BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
  });

  beforeAll(async () => {
    await client.connect();
    // Temporary tables shadow nothing outside this session and vanish with it.
    await client.query(
      `CREATE TEMP TABLE events (id text PRIMARY KEY, application_id int, event_type text, payload text, created_at timestamptz(3))`,
    );
    await client.query(`CREATE TYPE pg_temp.delivery_status AS ENUM ('pending', 'sending', 'succeeded', 'failed', 'cancelled')`);
    await client.query(`CREATE TEMP TABLE deliveries (id text PRIMARY KEY, event_id text, application_id int, event_type text,
      status pg_temp.delivery_status, attempt_count int, next_attempt_at timestamptz(3), created_at timestamptz(3), updated_at timestamptz(3))`);
  });
  afterAll(() => client.end());

  it('are evt_/dlv_ + a lowercase ULID whose time is the row creation time, ordered as the rows were created', async () => {
    const fromMs = Date.UTC(2026, 10, 1);
    expect(await seedEvents(client, { applicationId: 7, count: 500, fromMs, stepMs: 1_000, tag: 'spec' })).toBe(500);
    expect(await seedDeliveries(client, { applicationId: 7, status: 'failed', attemptCount: 6 })).toBe(500);

    const events = (
      await client.query<{ id: string; created_at: Date; payload: string }>('SELECT id, created_at, payload FROM events ORDER BY id')
    ).rows;
    expect(events.map((event) => event.created_at.getTime())).toEqual(Array.from({ length: 500 }, (_, i) => fromMs + i * 1_000));
    for (const event of events) {
      expect(event.id).toMatch(idPattern('evt'));
      expect(timeOf(event.id)).toBe(event.created_at.getTime());
      expect(() => JSON.parse(event.payload)).not.toThrow();
    }
    const deliveries = (
      await client.query<{ id: string; event_id: string; status: string }>('SELECT id, event_id, status::text FROM deliveries')
    ).rows;
    for (const delivery of deliveries) {
      expect(delivery.id).toMatch(idPattern('dlv'));
      expect(delivery.id.slice(4, 14)).toBe(delivery.event_id.slice(4, 14));
      expect(delivery.status).toBe('failed');
    }
  });
});
