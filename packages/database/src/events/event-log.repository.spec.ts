import { firstIdAt } from '@herald/core';
import { PgPool } from '../pg-pool';
import { ApplicationScope } from '../records';
import { cloneDatabase, TestDatabase } from '../testing/test-databases';
import { testServerUrl, testTemplateDatabase } from '../testing/config/test-server';
import { sql } from '../testing/sql';
import { EventLogRepository } from './event-log.repository';

/**
 * The events' read side against a cloned database, rows written in SQL so each test states the
 * events it starts from: newest first by id with cursor paging and filters, one event with its
 * payload, each with its deliveries' ids, and never Herald's notices to the operator. Each test
 * has an application of its own.
 */
describe('EventLogRepository', () => {
  let db: TestDatabase;
  let pool: PgPool;
  let eventLog: EventLogRepository;
  let nextApplication = 1;
  let nextRow = 0;

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    pool = new PgPool({ url: db.url, poolSize: 2 });
    eventLog = new EventLogRepository(pool);
    await sql(db.url, `INSERT INTO accounts (id, name) VALUES ('acc_event_log', 'event log tests')`);
  });
  afterAll(async () => {
    await pool.onApplicationShutdown();
    await db.drop();
  });

  async function application(): Promise<ApplicationScope> {
    const id = nextApplication++;
    await sql(db.url, `INSERT INTO applications (id, account_id, name) VALUES ($1, 'acc_event_log', 'app')`, [id]);
    return { applicationId: id, accountId: 'acc_event_log' } as ApplicationScope;
  }

  /** An id of `prefix` made at `at`, after every id made before it (ids are time-ordered, as Herald's are). */
  const idAt = (prefix: 'evt' | 'dlv', at: Date) => `${firstIdAt(prefix, at)}${String(nextRow++).padStart(16, '0')}`;

  /** An event of the application published at `createdAt`, with `deliveries` deliveries (finished, so out of the queue); its id and theirs. */
  async function published(
    scope: ApplicationScope,
    createdAt: Date,
    options: { eventType?: string; idempotencyKey?: string; orderingKey?: string; deliveries?: number; payload?: string } = {},
  ): Promise<{ id: string; deliveryIds: string[] }> {
    const id = idAt('evt', createdAt);
    const deliveryIds = Array.from({ length: options.deliveries ?? 1 }, () => idAt('dlv', createdAt));
    await sql(
      db.url,
      `WITH e AS (
         INSERT INTO events (id, application_id, event_type, payload, idempotency_key, created_at, ordering_key) VALUES ($1, $2, $3, $4, $5, $6, $8)
       )
       INSERT INTO deliveries (id, event_id, application_id, event_type, status, created_at, updated_at)
       SELECT d, $1, $2, $3, 'succeeded', $6, $6 FROM unnest($7::text[]) d`,
      [
        id,
        scope.applicationId,
        options.eventType ?? 'acw_start',
        options.payload ?? '{"n":1}',
        options.idempotencyKey ?? null,
        createdAt,
        // Stored newest first, so only the read's own order gives them oldest first.
        [...deliveryIds].reverse(),
        options.orderingKey ?? null,
      ],
    );
    return { id, deliveryIds };
  }

  it('lists the application’s events newest first, without payloads, each with its deliveries’ ids, and pages by id', async () => {
    const scope = await application();
    const t0 = new Date(Date.now() - 60 * 60_000);
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await published(scope, new Date(t0.getTime() + i * 60_000), { deliveries: i === 4 ? 2 : 1 }));
    await published(await application(), new Date());
    // Herald's notices about the application are the operator's.
    await published(scope, new Date(), { eventType: 'webhook.disabled' });

    const first = await eventLog.list(scope, {}, 2, null);
    expect(first).toEqual({
      items: [
        {
          id: made[4].id,
          eventType: 'acw_start',
          createdAt: new Date(t0.getTime() + 4 * 60_000),
          idempotencyKey: null,
          orderingKey: null,
          deliveryIds: made[4].deliveryIds,
        },
        {
          id: made[3].id,
          eventType: 'acw_start',
          createdAt: new Date(t0.getTime() + 3 * 60_000),
          idempotencyKey: null,
          orderingKey: null,
          deliveryIds: made[3].deliveryIds,
        },
      ],
      nextCursor: made[3].id,
    });
    const second = await eventLog.list(scope, {}, 2, first.nextCursor);
    expect([second.items.map((e) => e.id), second.nextCursor]).toEqual([[made[2].id, made[1].id], made[1].id]);
    const last = await eventLog.list(scope, {}, 2, second.nextCursor);
    expect([last.items.map((e) => e.id), last.nextCursor]).toEqual([[made[0].id], null]);
  });

  it('filters by event type and by idempotency key', async () => {
    const scope = await application();
    const at = new Date(Date.now() - 60_000);
    const keyed = await published(scope, at, { idempotencyKey: 'order-17' });
    const voice = await published(scope, at, { eventType: 'voice_campaign_activate', idempotencyKey: 'order-18' });
    const plain = await published(scope, at, { deliveries: 0 });
    const ids = async (filter: { eventType?: string; idempotencyKey?: string }) =>
      (await eventLog.list(scope, filter, 50, null)).items.map((e) => e.id);

    expect(await ids({})).toEqual([plain.id, voice.id, keyed.id]);
    expect(await ids({ eventType: 'voice_campaign_activate' })).toEqual([voice.id]);
    expect(await ids({ idempotencyKey: 'order-17' })).toEqual([keyed.id]);
    expect(await ids({ eventType: 'voice_campaign_activate', idempotencyKey: 'order-17' })).toEqual([]);
    expect((await eventLog.list(scope, {}, 50, null)).items.find((e) => e.id === plain.id)?.deliveryIds).toEqual([]);
  });

  it('finds one of the application’s events with its payload as published, and nothing of another’s or of the operator’s', async () => {
    const scope = await application();
    const at = new Date(Date.now() - 60_000);
    const payload = '{"z":1,"a":[true,null],"s":"é"}';
    const event = await published(scope, at, { payload, idempotencyKey: 'k-1', orderingKey: 'call-9', deliveries: 2 });
    const notice = await published(scope, at, { eventType: 'delivery.exhausted' });

    expect(await eventLog.find(scope, event.id)).toEqual({
      id: event.id,
      eventType: 'acw_start',
      payload,
      idempotencyKey: 'k-1',
      orderingKey: 'call-9',
      createdAt: at,
      deliveryIds: event.deliveryIds,
    });
    expect(await eventLog.find(await application(), event.id)).toBeNull();
    expect(await eventLog.find(scope, notice.id)).toBeNull();
    expect(await eventLog.find(scope, 'evt_unknown')).toBeNull();
  });
});
