import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { PgPool } from '../pg-pool';
import { ApplicationScope } from '../records';
import { cloneDatabase, TestDatabase } from '../testing/test-databases';
import { testServerUrl, testTemplateDatabase } from '../testing/config/test-server';
import { sql } from '../testing/sql';
import { testAudit } from '../testing/audit';
import { THROTTLE_HORIZON_MS } from './throttle.sql';
import { WebhookThrottleRepository } from './webhook-throttle.repository';

/**
 * Setting a throttle against a cloned database, rows written in SQL so each test states the
 * slots it starts from: the webhook's rate, the shared next slot brought back, and the slots
 * reserved under the old rate cleared (and only those).
 */
describe('WebhookThrottleRepository', () => {
  let db: TestDatabase;
  let pool: PgPool;
  let notifier: DeliveryNotifier;
  let throttles: WebhookThrottleRepository;
  let nextApplication = 1;
  let nextRow = 0;

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    pool = new PgPool({ url: db.url, poolSize: 2 });
    notifier = new DeliveryNotifier(pool);
    throttles = new WebhookThrottleRepository(pool, notifier);
    await sql(db.url, `INSERT INTO accounts (id, name) VALUES ('acc_throttle', 'throttle tests')`);
  });
  afterAll(async () => {
    await pool.onApplicationShutdown();
    await db.drop();
  });
  afterEach(() => jest.restoreAllMocks());

  const scopeOf = (applicationId: number) => ({ applicationId, accountId: 'acc_throttle' }) as ApplicationScope;

  /** An application whose webhook is throttled at `perSecond` (none without `webhook`); its id. */
  async function application(perSecond: number | null, webhook = true): Promise<number> {
    const id = nextApplication++;
    await sql(db.url, `INSERT INTO applications (id, account_id, name) VALUES ($1, 'acc_throttle', 'app')`, [id]);
    if (!webhook) return id;
    await sql(
      db.url,
      `INSERT INTO webhooks (application_id, url, destination_host, retry_enabled, retry_value, max_retries, backoff_type, backoff_value, headers, throttle_per_second)
       VALUES ($1, 'http://10.0.0.1:9/hook', '10.0.0.1', 1, 1, 3, 'fixed', 0, '{}', $2)`,
      [id, perSecond],
    );
    return id;
  }

  /**
   * A delivery of `applicationId` made at `createdAt`, pending or paused, due at `dueAt` and
   * holding the throttle slot `slotAt` reserved at `reservedAt` (none when null); its id.
   */
  async function queued(
    applicationId: number,
    row: { createdAt: Date; dueAt: Date; slotAt: Date | null; reservedAt: Date | null; paused?: boolean },
  ): Promise<string> {
    const n = nextRow++;
    await sql(
      db.url,
      `WITH e AS (
         INSERT INTO events (id, application_id, event_type, payload, created_at) VALUES ($1, $3, 'acw_start', '{}', $4)
       ), d AS (
         INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
         VALUES ($2, $1, $3, 'acw_start', CASE WHEN $8 THEN 'paused' ELSE 'pending' END::delivery_status, $5, $4, $4)
       )
       INSERT INTO delivery_queue (delivery_id, application_id, due_at, throttle_slot_at, slot_reserved_at, paused)
       VALUES ($2, $3, $5, $6, $7, $8)`,
      [`evt_${n}`, `dlv_${n}`, applicationId, row.createdAt, row.dueAt, row.slotAt, row.reservedAt, row.paused ?? false],
    );
    return `dlv_${n}`;
  }

  const queueRow = (id: string) =>
    sql<{ due_at: Date; throttle_slot_at: Date | null; slot_reserved_at: Date | null; paused: boolean }>(
      db.url,
      'SELECT due_at, throttle_slot_at, slot_reserved_at, paused FROM delivery_queue WHERE delivery_id = $1',
      [id],
    ).then(([row]) => row);

  it('sets and removes the rate, and answers null for an application without a webhook', async () => {
    const app = await application(null);
    const bare = await application(null, false);

    expect(await throttles.find(scopeOf(app))).toEqual({ perSecond: null, maxInFlight: null });
    expect(await throttles.set(scopeOf(app), { perSecond: 25 }, new Date(), testAudit)).toEqual({ perSecond: 25, maxInFlight: null });
    expect(await throttles.find(scopeOf(app))).toEqual({ perSecond: 25, maxInFlight: null });
    expect(await throttles.set(scopeOf(app), { perSecond: null }, new Date(), testAudit)).toEqual({ perSecond: null, maxInFlight: null });
    expect(await throttles.find(scopeOf(app))).toEqual({ perSecond: null, maxInFlight: null });

    expect(await throttles.find(scopeOf(bare))).toBeNull();
    expect(await throttles.set(scopeOf(bare), { perSecond: 10 }, new Date(), testAudit)).toBeNull();
  });

  it('clears the slots reserved before the change, making pending ones due at their creation time, and keeps those reserved since', async () => {
    const app = await application(2);
    const other = await application(2);
    const now = new Date();
    const created = new Date(now.getTime() - 60_000);
    const slot = new Date(now.getTime() + 30_000);
    const dueBeforeSlot = new Date(slot.getTime() - 100);
    const before = new Date(now.getTime() - 1_000);
    const reservedBefore = await queued(app, { createdAt: created, dueAt: dueBeforeSlot, slotAt: slot, reservedAt: before });
    const pausedBefore = await queued(app, { createdAt: created, dueAt: dueBeforeSlot, slotAt: slot, reservedAt: before, paused: true });
    // Reserved at the change's own time or later: already of the new rate.
    const reservedSince = await queued(app, { createdAt: created, dueAt: dueBeforeSlot, slotAt: slot, reservedAt: now });
    const withoutSlot = await queued(app, { createdAt: created, dueAt: new Date(now.getTime() + 5_000), slotAt: null, reservedAt: null });
    const otherApplication = await queued(other, { createdAt: created, dueAt: dueBeforeSlot, slotAt: slot, reservedAt: before });
    const woken = jest.spyOn(notifier, 'deliveriesCommitted');

    expect(await throttles.set(scopeOf(app), { perSecond: 5 }, now, testAudit)).toEqual({ perSecond: 5, maxInFlight: null });

    expect(await queueRow(reservedBefore)).toEqual({ due_at: created, throttle_slot_at: null, slot_reserved_at: null, paused: false });
    // A paused one loses its slot but stays where it was: enabling decides when it is due.
    expect(await queueRow(pausedBefore)).toEqual({ due_at: dueBeforeSlot, throttle_slot_at: null, slot_reserved_at: null, paused: true });
    expect(await queueRow(reservedSince)).toEqual({ due_at: dueBeforeSlot, throttle_slot_at: slot, slot_reserved_at: now, paused: false });
    expect(await queueRow(withoutSlot)).toEqual({
      due_at: new Date(now.getTime() + 5_000),
      throttle_slot_at: null,
      slot_reserved_at: null,
      paused: false,
    });
    expect(await queueRow(otherApplication)).toEqual({
      due_at: dueBeforeSlot,
      throttle_slot_at: slot,
      slot_reserved_at: before,
      paused: false,
    });
    // Something became due: the workers are woken.
    expect(woken).toHaveBeenCalledTimes(1);
  });

  it('wakes no worker when only paused deliveries lost their slot', async () => {
    const app = await application(2);
    const now = new Date();
    const slot = new Date(now.getTime() + 30_000);
    const paused = await queued(app, { createdAt: now, dueAt: slot, slotAt: slot, reservedAt: new Date(now.getTime() - 1), paused: true });
    const woken = jest.spyOn(notifier, 'deliveriesCommitted');

    await throttles.set(scopeOf(app), { perSecond: 3 }, now, testAudit);

    expect(await queueRow(paused)).toMatchObject({ throttle_slot_at: null, slot_reserved_at: null });
    expect(woken).not.toHaveBeenCalled();
  });

  it('brings the shared next slot back to the hold horizon, and leaves one already nearer alone', async () => {
    const far = await application(1);
    const near = await application(1);
    const past = new Date(Date.now() - 60_000);
    await sql(db.url, `INSERT INTO webhook_throttles (application_id, next_slot_at) VALUES ($1, now() + interval '1 hour'), ($2, $3)`, [
      far,
      near,
      past,
    ]);
    const nextSlot = async (app: number) =>
      (await sql<{ next_slot_at: Date }>(db.url, 'SELECT next_slot_at FROM webhook_throttles WHERE application_id = $1', [app]))[0]
        .next_slot_at;

    const before = Date.now();
    await throttles.set(scopeOf(far), { perSecond: 10 }, new Date(), testAudit);
    await throttles.set(scopeOf(near), { perSecond: 10 }, new Date(), testAudit);

    // Within the horizon of the database's clock at the change (generous bounds for the machine's load).
    const farSlot = (await nextSlot(far)).getTime();
    expect(farSlot).toBeGreaterThanOrEqual(before + THROTTLE_HORIZON_MS - 1_000);
    expect(farSlot).toBeLessThanOrEqual(Date.now() + THROTTLE_HORIZON_MS + 1_000);
    expect(await nextSlot(near)).toEqual(past);
  });
});
