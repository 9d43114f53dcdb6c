import pg from 'pg';
import { DELIVERY_CHANNEL } from '../notifications/delivery-channel';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { PgPool } from '../pg-pool';
import { ApplicationScope } from '../records';
import { cloneDatabase, TestDatabase } from '../testing/test-databases';
import { testServerUrl, testTemplateDatabase } from '../testing/config/test-server';
import { sql } from '../testing/sql';
import { DeliveryQueueRepository } from '../queue/delivery-queue.repository';
import { EventRepository, NewEvent } from './event.repository';

/**
 * The publish statements against a cloned database: what is stored for a publish with and without
 * an idempotency key, what a taken key reports, and that a refused batch stores nothing.
 */
/** The account and application of `scope`, with a webhook to `host` and a subscription to acw_start. */
async function subscribedApplication(url: string, scope: ApplicationScope, host: string): Promise<void> {
  await sql(url, `INSERT INTO accounts (id, name) VALUES ($1, 'events tests')`, [scope.accountId]);
  await sql(url, `INSERT INTO applications (id, account_id, name) VALUES ($1, $2, 'app')`, [scope.applicationId, scope.accountId]);
  await sql(
    url,
    `INSERT INTO webhooks (application_id, url, destination_host, retry_enabled, retry_value, max_retries, backoff_type, backoff_value, headers)
     VALUES ($1, $2, $3, 1, 1, 3, 'fixed', 0, '{}')`,
    [scope.applicationId, `http://${host}:9/hook`, host],
  );
  await sql(url, `INSERT INTO subscriptions (application_id, event_type, ensure_delivery, active) VALUES ($1, 'acw_start', true, true)`, [
    scope.applicationId,
  ]);
}

describe('EventRepository', () => {
  let db: TestDatabase;
  let pool: PgPool;
  let events: EventRepository;
  const scope = { applicationId: 7, accountId: 'acc_events' } as ApplicationScope;
  let n = 0;

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    pool = new PgPool({ url: db.url, poolSize: 2 });
    events = new EventRepository(pool, new DeliveryNotifier(pool));
    await subscribedApplication(db.url, scope, '10.0.0.1');
  });
  afterAll(async () => {
    await pool.onApplicationShutdown();
    await db.drop();
  });

  function event(eventType = 'acw_start', idempotencyKey: string | null = null): NewEvent {
    n++;
    return {
      id: `evt_${n}`,
      eventType,
      payload: `{"n":${n}}`,
      createdAt: new Date(),
      idempotencyKey,
      orderingKey: null,
      deliveryId: `dlv_${n}`,
      ignoresSubscription: false,
      filteredOut: false,
      traceContext: null,
    };
  }
  const stored = async (id: string) => (await sql(db.url, 'SELECT id FROM events WHERE id = $1', [id])).length === 1;

  it('stores an event with its delivery when subscribed, and an unknown type as such', async () => {
    const plain = event();
    expect(await events.publish(scope, plain)).toEqual({
      kind: 'stored',
      record: { eventId: plain.id, eventType: 'acw_start', deliveryIds: [plain.deliveryId] },
    });
    expect(await events.publish(scope, event('no_such_type'))).toEqual({ kind: 'unknown_event_type' });
  });

  it('stores an event its subscription filtered out without a delivery, alone and in a micro-batch beside others', async () => {
    const refused = { ...event(), filteredOut: true };
    expect(await events.publish(scope, refused)).toEqual({
      kind: 'stored',
      record: { eventId: refused.id, eventType: 'acw_start', deliveryIds: [] },
    });
    expect(await stored(refused.id)).toBe(true);

    const mixed = [event(), { ...event(), filteredOut: true }, event()];
    const results = await Promise.all(mixed.map((item) => events.publish(scope, item)));
    expect(results.map((result) => (result.kind === 'stored' ? result.record.deliveryIds : null))).toEqual([
      [mixed[0].deliveryId],
      [],
      [mixed[2].deliveryId],
    ]);
  });

  it('stores each publish’s trace context with its event (PRODUCT.md §16), and null while traces are off', async () => {
    const contextOf = async (id: string) => (await sql(db.url, 'SELECT trace_context FROM events WHERE id = $1', [id]))[0].trace_context;
    const traced = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    // Concurrent publishes share a statement: each row keeps its own context, or none.
    const mixed = [{ ...event(), traceContext: traced }, event(), { ...event(), traceContext: `${traced} vendor=opaque` }];
    await Promise.all(mixed.map((item) => events.publish(scope, item)));
    expect(await Promise.all(mixed.map((item) => contextOf(item.id)))).toEqual([traced, null, `${traced} vendor=opaque`]);

    const untraced = [event(), event()];
    await Promise.all(untraced.map((item) => events.publish(scope, item)));
    expect(await Promise.all(untraced.map((item) => contextOf(item.id)))).toEqual([null, null]);

    const batch = [
      { ...event(), traceContext: traced },
      { ...event(), traceContext: traced },
    ];
    await events.publishBatch(
      scope,
      batch.map((e) => ({ event: e, idempotency: null })),
      () => true,
    );
    expect(await Promise.all(batch.map((item) => contextOf(item.id)))).toEqual([traced, traced]);
  });

  it('takes a key once: a second publish under it stores nothing and reports the first request and answer', async () => {
    const first = event('acw_start', 'k-1');
    const second = event('acw_start', 'k-1');
    await events.publish(scope, first, { key: 'k-1', requestHash: 'hash-a' });

    expect(await events.publish(scope, second, { key: 'k-1', requestHash: 'hash-b' })).toEqual({
      kind: 'key_taken',
      first: { requestHash: 'hash-a', record: { eventId: first.id, eventType: 'acw_start', deliveryIds: [first.deliveryId] } },
    });
    expect(await stored(second.id)).toBe(false);
  });

  it('takes over a key held longer than the window', async () => {
    await events.publish(scope, event('acw_start', 'k-old'), { key: 'k-old', requestHash: 'hash-a' });
    await sql(db.url, `UPDATE idempotency_keys SET created_at = created_at - interval '24 hours' WHERE key = 'k-old'`);
    const later = event('acw_start', 'k-old');
    expect(await events.publish(scope, later, { key: 'k-old', requestHash: 'hash-b' })).toMatchObject({ kind: 'stored' });
    expect(await stored(later.id)).toBe(true);
  });

  it('in one batch, reports a key repeated within it as taken by its first item', async () => {
    const items = [event('acw_start', 'k-2'), event('acw_start', 'k-2'), event()].map((e) => ({
      event: e,
      idempotency: e.idempotencyKey ? { key: e.idempotencyKey, requestHash: `hash-${e.id}` } : null,
    }));
    const result = await events.publishBatch(scope, items, () => true);
    expect(result).toMatchObject({
      kind: 'stored',
      results: [{ kind: 'stored' }, { kind: 'key_taken', first: { requestHash: `hash-${items[0].event.id}` } }, { kind: 'stored' }],
    });
    expect(await stored(items[1].event.id)).toBe(false);
  });

  it('stores nothing of a batch its caller refuses, or one with an unknown type (every such item named)', async () => {
    const refused = [event(), event()].map((e) => ({ event: e, idempotency: null }));
    expect(await events.publishBatch(scope, refused, () => false)).toEqual({ kind: 'refused' });
    expect(await stored(refused[0].event.id)).toBe(false);

    const unknown = [event(), event('nope_1'), event('nope_2')].map((e) => ({ event: e, idempotency: null }));
    expect(await events.publishBatch(scope, unknown, () => true)).toEqual({ kind: 'unknown_event_types', indexes: [1, 2] });
    expect(await stored(unknown[0].event.id)).toBe(false);
  });
  it('analyzes events, not deliveries, once this process has published 1,000 events, in the background', async () => {
    // A repository of its own: its count of what it published starts at zero.
    const fresh = new EventRepository(pool, new DeliveryNotifier(pool));
    const analyzed = async () =>
      (
        await sql<{ relname: string; analyzed: number }>(
          db.url,
          `SELECT relname, analyze_count::int AS analyzed FROM pg_stat_user_tables WHERE relname IN ('events', 'deliveries') ORDER BY relname`,
        )
      ).map((row) => row.analyzed);
    const before = await analyzed();
    const batch = (count: number) => Array.from({ length: count }, () => ({ event: event(), idempotency: null }));
    await fresh.publishBatch(scope, batch(999), () => true);
    await fresh.publishBatch(scope, batch(1), () => true);
    // PostgreSQL reports a session's counts when it goes idle: wait for them. One ANALYZE
    // statement reports all its tables at once, so by then deliveries' count is final too.
    let after = await analyzed();
    for (let tries = 0; tries < 50 && after[1] === before[1]; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await analyzed();
    }
    // [deliveries, events]
    expect(after.map((count, i) => count - before[i])).toEqual([0, 1]);
  });
});

describe("EventRepository's wake-up of the workers", () => {
  let db: TestDatabase;
  let pool: PgPool;
  const scope = { applicationId: 8, accountId: 'acc_wake' } as ApplicationScope;

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    pool = new PgPool({ url: db.url, poolSize: 2 });
    await subscribedApplication(db.url, scope, '10.0.0.8');
  });
  afterAll(async () => {
    await pool.onApplicationShutdown();
    await db.drop();
  });

  it('names the publishing transaction, which the snapshot of a claim made after it has seen and of one made before has not', async () => {
    const listener = new pg.Client({ connectionString: db.url });
    const payloads: string[] = [];
    listener.on('notification', (message) => payloads.push(message.payload ?? ''));
    await listener.connect();
    await listener.query(`LISTEN ${DELIVERY_CHANNEL}`);
    const queue = new DeliveryQueueRepository(pool);
    const claim = () => {
      const now = new Date();
      return queue.claim({
        limit: 10,
        token: `tok_${now.getTime()}`,
        now,
        leaseUntil: new Date(now.getTime() + 60_000),
        hostsInFlight: new Map(),
        hostCap: 16,
        endpointCap: 16,
      });
    };
    const seen = async (transaction: string, snapshot: string | null) =>
      (await sql<{ seen: boolean }>(db.url, 'SELECT pg_visible_in_snapshot($1::xid8, $2::pg_snapshot) AS seen', [transaction, snapshot]))[0]
        .seen;
    try {
      const before = await claim();
      expect(before.deliveries).toEqual([]);
      const published = await new EventRepository(pool, new DeliveryNotifier(pool)).publish(scope, {
        id: 'evt_wake',
        eventType: 'acw_start',
        payload: '{}',
        createdAt: new Date(),
        idempotencyKey: null,
        orderingKey: null,
        deliveryId: 'dlv_wake',
        ignoresSubscription: false,
        filteredOut: false,
        traceContext: null,
      });
      expect(published).toMatchObject({ kind: 'stored', record: { deliveryIds: ['dlv_wake'] } });
      for (let tries = 0; tries < 50 && payloads.length === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(payloads).toEqual([expect.stringMatching(/^\d+$/)]);
      const after = await claim();
      expect(after.deliveries.map((delivery) => delivery.id)).toEqual(['dlv_wake']);
      expect(await seen(payloads[0], after.snapshot)).toBe(true);
      expect(await seen(payloads[0], before.snapshot)).toBe(false);
    } finally {
      await listener.end();
    }
  });
});
