import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { PgPool } from '../pg-pool';
import { cloneDatabase, TestDatabase } from '../testing/test-databases';
import { testServerUrl, testTemplateDatabase } from '../testing/config/test-server';
import { sql } from '../testing/sql';
import { testAudit } from '../testing/audit';
import { OperationalNotice, OperationalWebhookRepository, queueOperationalNotice } from './operational-webhook.repository';

/**
 * The operational webhook's statements against a cloned database, rows written in SQL so each
 * test states what it starts from: the one configuration row, a notice queued (event, delivery
 * and queue row) only while it is configured, and removing it cancelling the notices that wait.
 * The configuration is one row for the whole database, so each test starts without it.
 */
describe('OperationalWebhookRepository', () => {
  let db: TestDatabase;
  let pool: PgPool;
  let operational: OperationalWebhookRepository;
  let nextApplication = 1;
  let nextRow = 0;

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    pool = new PgPool({ url: db.url, poolSize: 2 });
    operational = new OperationalWebhookRepository(pool, new DeliveryNotifier(pool));
    await sql(db.url, `INSERT INTO accounts (id, name) VALUES ('acc_ops', 'operational webhook tests')`);
  });
  afterAll(async () => {
    await pool.onApplicationShutdown();
    await db.drop();
  });
  beforeEach(() => sql(db.url, 'DELETE FROM operational_webhook'));

  async function application(): Promise<number> {
    const id = nextApplication++;
    await sql(db.url, `INSERT INTO applications (id, account_id, name) VALUES ($1, 'acc_ops', 'app')`, [id]);
    return id;
  }

  function notice(applicationId: number, at = new Date()): OperationalNotice {
    const n = nextRow++;
    return {
      eventId: `evt_${n}`,
      deliveryId: `dlv_${n}`,
      type: 'delivery.exhausted',
      applicationId,
      payload: { application_id: applicationId, delivery_id: `dlv_x${n}`, attempts: 4 },
      at,
    };
  }
  const configure = (now = new Date()) =>
    operational.upsert({ url: 'https://Ops.Example.test:8443/herald', headers: {} }, 'first-secret', now, testAudit);

  /** The notice's event, delivery and queue row, as far as each exists. */
  const stored = async (queuedNotice: OperationalNotice) => ({
    event: (
      await sql(db.url, 'SELECT application_id, event_type, payload, created_at FROM events WHERE id = $1', [queuedNotice.eventId])
    )[0],
    delivery: (
      await sql(
        db.url,
        `SELECT event_id, application_id, event_type, status::text, destination::text, ignores_subscription, next_attempt_at, updated_at
           FROM deliveries WHERE id = $1`,
        [queuedNotice.deliveryId],
      )
    )[0],
    queue: (
      await sql(
        db.url,
        'SELECT application_id, destination::text, due_at, paused, lease_token FROM delivery_queue WHERE delivery_id = $1',
        [queuedNotice.deliveryId],
      )
    )[0],
  });

  it('stores one configuration: a new one takes the first secret, a replaced one keeps its secret and creation time', async () => {
    expect(await operational.find()).toBeNull();
    expect(await operational.secret()).toBeNull();
    const created = new Date(Date.now() - 60_000);

    expect(await configure(created)).toEqual({
      url: 'https://Ops.Example.test:8443/herald',
      headers: {},
      createdAt: created,
      updatedAt: created,
    });
    expect(await sql(db.url, 'SELECT destination_host FROM operational_webhook')).toEqual([{ destination_host: 'ops.example.test' }]);
    const updated = new Date();
    const replaced = await operational.upsert(
      { url: 'http://10.9.9.9:9/ops', headers: { 'x-z': '1', 'x-a': '2' } },
      'second-secret',
      updated,
      testAudit,
    );

    expect(replaced).toEqual({ url: 'http://10.9.9.9:9/ops', headers: { 'x-z': '1', 'x-a': '2' }, createdAt: created, updatedAt: updated });
    expect(Object.keys(replaced.headers)).toEqual(['x-z', 'x-a']);
    expect(await operational.find()).toEqual(replaced);
    expect(await operational.secret()).toBe('first-secret');
    expect(await sql(db.url, 'SELECT id, destination_host FROM operational_webhook')).toEqual([{ id: 1, destination_host: '10.9.9.9' }]);
  });

  it('queues a notice as an event, its delivery and its queue row, due at once, only while one is configured', async () => {
    const app = await application();
    const unheard = notice(app);
    expect(await operational.notify(unheard)).toBe(false);
    expect(await stored(unheard)).toEqual({ event: undefined, delivery: undefined, queue: undefined });

    await configure();
    const at = new Date();
    const heard = notice(app, at);
    expect(await operational.notify(heard)).toBe(true);

    expect(await stored(heard)).toEqual({
      event: { application_id: app, event_type: 'delivery.exhausted', payload: JSON.stringify(heard.payload), created_at: at },
      delivery: {
        event_id: heard.eventId,
        application_id: app,
        event_type: 'delivery.exhausted',
        status: 'pending',
        destination: 'operational',
        ignores_subscription: true,
        next_attempt_at: at,
        updated_at: at,
      },
      queue: { application_id: app, destination: 'operational', due_at: at, paused: false, lease_token: null },
    });
  });

  it('queues a notice with the change it reports: rolled back with it, nothing is left', async () => {
    await configure();
    const rolledBack = notice(await application());

    await expect(
      pool.transaction(async (tx) => {
        expect(await queueOperationalNotice(tx, rolledBack)).toBe(true);
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');

    expect(await stored(rolledBack)).toEqual({ event: undefined, delivery: undefined, queue: undefined });
  });

  it('on delete, cancels the notices waiting to be sent, leaves one being sent and the applications’ own deliveries', async () => {
    const app = await application();
    await configure();
    const waiting = [notice(app), notice(app)];
    const sending = notice(app);
    for (const queued of [...waiting, sending]) await operational.notify(queued);
    await sql(
      db.url,
      `UPDATE delivery_queue SET lease_token = 'worker', lease_until = now() + interval '1 minute' WHERE delivery_id = $1`,
      [sending.deliveryId],
    );
    await sql(
      db.url,
      `WITH e AS (
         INSERT INTO events (id, application_id, event_type, payload, created_at) VALUES ('evt_own', $1, 'acw_start', '{}', now())
       ), d AS (
         INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
         VALUES ('dlv_own', 'evt_own', $1, 'acw_start', 'pending', now(), now(), now())
       )
       INSERT INTO delivery_queue (delivery_id, application_id, due_at) VALUES ('dlv_own', $1, now())`,
      [app],
    );
    const now = new Date();

    expect(await operational.delete(now, testAudit)).toMatchObject({ url: 'https://Ops.Example.test:8443/herald' });

    expect(await operational.find()).toBeNull();
    for (const cancelled of waiting) {
      const { delivery, queue } = await stored(cancelled);
      expect([delivery.status, delivery.next_attempt_at, delivery.updated_at, queue]).toEqual(['cancelled', null, now, undefined]);
    }
    expect(await stored(sending)).toMatchObject({ delivery: { status: 'pending' }, queue: { lease_token: 'worker' } });
    expect(
      await sql(db.url, `SELECT d.status::text FROM deliveries d JOIN delivery_queue q ON q.delivery_id = d.id WHERE d.id = 'dlv_own'`),
    ).toEqual([{ status: 'pending' }]);

    // Nothing left to remove: null, and nothing cancelled (the worker's lease has run out meanwhile).
    await sql(db.url, 'UPDATE delivery_queue SET lease_token = NULL, lease_until = NULL WHERE delivery_id = $1', [sending.deliveryId]);
    expect(await operational.delete(new Date(), testAudit)).toBeNull();
    expect(await stored(sending)).toMatchObject({ delivery: { status: 'pending' }, queue: { lease_token: null } });
  });
});
