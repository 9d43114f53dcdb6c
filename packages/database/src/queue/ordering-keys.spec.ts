import { randomUUID } from 'node:crypto';
import { DeliveryLogRepository } from '../events/delivery-log.repository';
import { EventRepository, NewEvent } from '../events/event.repository';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { PgPool } from '../pg-pool';
import { ApplicationScope } from '../records';
import { cloneDatabase, TestDatabase } from '../testing/test-databases';
import { testServerUrl, testTemplateDatabase } from '../testing/config/test-server';
import { sql } from '../testing/sql';
import { ClaimedDelivery, DeliveryQueueRepository, FinishOutcome, NewAttemptRecord } from './delivery-queue.repository';

/**
 * Ordered delivery per key (PRODUCT.md §13) in the statements that make it: the publish places a
 * keyed delivery behind the earlier ones of its key, the claim takes only each key's head, and
 * whatever takes a head out of the queue (a finish for good, a cancel, a manual retry) lets the
 * next one go; a retry to come holds back only its own key.
 */
describe('ordering keys in the queue', () => {
  let db: TestDatabase;
  let pool: PgPool;
  let events: EventRepository;
  let queue: DeliveryQueueRepository;
  let log: DeliveryLogRepository;
  let nextApplication = 1;
  let n = 0;

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    pool = new PgPool({ url: db.url, poolSize: 3 });
    const notifier = new DeliveryNotifier(pool);
    events = new EventRepository(pool, notifier);
    queue = new DeliveryQueueRepository(pool);
    log = new DeliveryLogRepository(pool, notifier);
    await sql(db.url, `INSERT INTO accounts (id, name) VALUES ('acc_order', 'ordering tests')`);
  });
  afterAll(async () => {
    await pool.onApplicationShutdown();
    await db.drop();
  });

  /** An application with a webhook subscribed to acw_start, on a host of its own. */
  async function application(): Promise<ApplicationScope> {
    const id = nextApplication++;
    await sql(db.url, `INSERT INTO applications (id, account_id, name) VALUES ($1, 'acc_order', 'app')`, [id]);
    await sql(
      db.url,
      `INSERT INTO webhooks (application_id, url, destination_host, retry_enabled, retry_value, max_retries, backoff_type, backoff_value, headers)
       VALUES ($1, $2, $3, 1, 1, 3, 'fixed', 0, '{}')`,
      [id, `http://10.1.0.${id}:9/hook`, `10.1.0.${id}`],
    );
    await sql(
      db.url,
      `INSERT INTO subscriptions (application_id, event_type, ensure_delivery, active) VALUES ($1, 'acw_start', true, true)`,
      [id],
    );
    return { applicationId: id, accountId: 'acc_order' } as ApplicationScope;
  }

  function event(orderingKey: string | null): NewEvent {
    n++;
    return {
      id: `evt_order_${n}`,
      eventType: 'acw_start',
      payload: `{"n":${n}}`,
      createdAt: new Date(Date.now() - 1_000),
      idempotencyKey: null,
      orderingKey,
      deliveryId: `dlv_order_${n}`,
      ignoresSubscription: false,
      filteredOut: false,
      traceContext: null,
    };
  }

  /** Publishes one batch of events with these keys; returns their delivery ids in the same order. */
  async function publish(scope: ApplicationScope, keys: (string | null)[]): Promise<string[]> {
    const made = keys.map(event);
    const result = await events.publishBatch(
      scope,
      made.map((e) => ({ event: e, idempotency: null })),
      () => true,
    );
    if (result.kind !== 'stored') throw new Error(`not stored: ${result.kind}`);
    return made.map((e) => e.deliveryId);
  }

  const token = randomUUID();
  /** A claim; what it took of other tests' applications (claims are global) is left out. */
  async function claim(scope: ApplicationScope): Promise<ClaimedDelivery[]> {
    const now = new Date();
    const batch = await queue.claim({
      limit: 50,
      token,
      now,
      leaseUntil: new Date(now.getTime() + 60_000),
      hostsInFlight: new Map(),
      hostCap: 64,
      endpointCap: 64,
    });
    return batch.deliveries.filter((d) => d.applicationId === scope.applicationId);
  }
  const ids = (claimed: ClaimedDelivery[]) => claimed.map((d) => d.id).sort();

  function attempt(): NewAttemptRecord {
    return {
      startedAt: new Date(),
      durationMs: 2,
      url: 'http://10.1.0.1:9/hook',
      responseStatus: 200,
      responseExcerpt: '',
      error: null,
      nextAttemptAt: null,
      requestHeaders: null,
    };
  }
  const finish = (delivery: ClaimedDelivery, outcome: Omit<FinishOutcome, 'now'>) =>
    queue.finish(delivery, token, { ...outcome, now: new Date() }, attempt());

  it('claims only the head of each key, beside unkeyed deliveries, and the next once the head is done', async () => {
    const scope = await application();
    const [a1, b1, a2, plain, a3] = await publish(scope, ['a', 'b', 'a', null, 'a']);

    const first = await claim(scope);
    expect(ids(first)).toEqual([a1, b1, plain].sort());
    expect(first.find((d) => d.id === a1)!.orderingKey).toBe('a');
    // Nothing more while the heads are out.
    expect(await claim(scope)).toEqual([]);

    expect(
      await finish(
        first.find((d) => d.id === a1)!,
        { status: 'succeeded', nextAttemptAt: null },
      ),
    ).toBe(true);
    const second = await claim(scope);
    expect(ids(second)).toEqual([a2]);
    // A head that fails for good lets its key move on too.
    expect(await finish(second[0], { status: 'failed', nextAttemptAt: null })).toBe(true);
    expect(ids(await claim(scope))).toEqual([a3]);
  });

  it('a head waiting for its retry holds back only its own key', async () => {
    const scope = await application();
    const [k1, k2] = await publish(scope, ['k', 'k']);
    const [head] = await claim(scope);
    expect(head.id).toBe(k1);
    // Retried in a minute: still its key's head.
    expect(await finish(head, { status: 'pending', nextAttemptAt: new Date(Date.now() + 60_000) })).toBe(true);
    const [other] = await publish(scope, ['other']);
    expect(ids(await claim(scope))).toEqual([other]);
    const [{ blocked }] = await sql(db.url, 'SELECT blocked FROM delivery_queue WHERE delivery_id = $1', [k2]);
    expect(blocked).toBe(true);
  });

  it('keeps the order of items within one batch and across batches, and places a key behind what is already queued', async () => {
    const scope = await application();
    const first = await publish(scope, ['q', 'q']);
    const second = await publish(scope, ['q']);
    const order = await sql<{ delivery_id: string; blocked: boolean }>(
      db.url,
      `SELECT delivery_id, blocked FROM delivery_queue WHERE application_id = $1 AND ordering_key = 'q' ORDER BY sequence`,
      [scope.applicationId],
    );
    expect(order).toEqual([
      { delivery_id: first[0], blocked: false },
      { delivery_id: first[1], blocked: true },
      { delivery_id: second[0], blocked: true },
    ]);
  });

  it('a cancelled head, and a manual retry of a waiting delivery, let the rest of the key go', async () => {
    const scope = await application();
    const [h1, h2, h3] = await publish(scope, ['c', 'c', 'c']);
    // The third is asked for now by hand: it leaves the order, and is sent at once.
    const asked = await log.requestAttempt(scope, h3, new Date());
    expect(asked?.before).toBe('pending');
    const claimed = await claim(scope);
    expect(ids(claimed)).toEqual([h1, h3].sort());
    // The head's webhook is gone, say: cancelled, and the second is next.
    expect(
      await queue.cancelClaimed(
        claimed.find((d) => d.id === h1)!,
        token,
        new Date(),
      ),
    ).toBe(true);
    expect(ids(await claim(scope))).toEqual([h2]);
  });
});
