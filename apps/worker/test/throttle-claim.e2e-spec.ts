import { randomUUID } from 'node:crypto';
import {
  ApplicationScope,
  ClaimOptions,
  DeliveryQueueRepository,
  PgPool,
  THROTTLE_HORIZON_MS,
  WebhookThrottleRepository,
} from '@herald/database';
import { testAudit } from '@herald/database/testing';
import { TestWorker } from './support/test-worker';

/**
 * The throttle's side of the claim (PRODUCT.md §10; throttle.sql.ts), statement by statement
 * against PostgreSQL: which slot each delivery gets, which are held and which wait. No worker
 * runs; apps/worker/test/throttle.e2e-spec.ts measures the result at a receiver.
 */
describe('claiming deliveries of a throttled webhook', () => {
  let worker: TestWorker;
  let queue: DeliveryQueueRepository;

  beforeAll(async () => {
    worker = await TestWorker.start({}, { runWorker: false });
    queue = worker.app.get(DeliveryQueueRepository);
  });
  afterAll(() => worker.close());

  // Every test has its own application; the others' deliveries are claimed out of the way first.
  beforeEach(async () => {
    await worker.sql(
      `WITH gone AS (DELETE FROM delivery_queue RETURNING delivery_id)
       UPDATE deliveries SET status = 'cancelled' FROM gone WHERE id = gone.delivery_id`,
    );
  });

  const claim = (overrides: Partial<ClaimOptions> = {}, on: DeliveryQueueRepository = queue) =>
    on.claim({
      limit: 50,
      token: randomUUID(),
      now: new Date(),
      leaseUntil: new Date(Date.now() + 60_000),
      hostsInFlight: new Map(),
      hostCap: 16,
      endpointCap: 16,
      ...overrides,
    });

  async function throttled(perSecond: number, deliveries: number): Promise<{ app: ApplicationScope; ids: string[] }> {
    const app = await worker.application({ url: 'http://127.0.0.1:9/hook' });
    await worker.app.get(WebhookThrottleRepository).set(app, { perSecond }, new Date(), testAudit);
    const ids: string[] = [];
    for (let i = 0; i < deliveries; i++) {
      ids.push((await worker.publish(app, 'acw_start', { i }))!);
      // A publish stamps its delivery due at the clock's millisecond; two in the same millisecond
      // would tie, and "oldest first" could then claim either. Apart, the order is the ids' order.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return { app, ids };
  }

  async function waitingRows(ids: string[]) {
    return worker.sql<{ id: string; status: string; slot_ms: string; due_before_slot_ms: string }>(
      `SELECT delivery_id AS id, 'pending' AS status, extract(epoch FROM throttle_slot_at) * 1000 AS slot_ms,
              extract(epoch FROM throttle_slot_at - due_at) * 1000 AS due_before_slot_ms
         FROM delivery_queue WHERE delivery_id = ANY($1) AND lease_token IS NULL ORDER BY throttle_slot_at`,
      [ids],
    );
  }

  it('gives each delivery its own slot, 1.03 / per_second apart and oldest first; holds those within the horizon, reserves the rest', async () => {
    const { ids } = await throttled(10, 5);
    const claimedAt = Date.now();
    const batch = await claim({ now: new Date(claimedAt) });

    // 10/s: slots 103 ms apart, so the first two fall within the 150 ms horizon.
    const held = [...batch.deliveries].sort((a, b) => a.throttle!.slotMs - b.throttle!.slotMs);
    expect(held.map((d) => d.id)).toEqual(ids.slice(0, 2));
    expect(batch.waiting).toBe(3);
    const [first, second] = held.map((d) => d.throttle!.slotMs);
    expect(second - first).toBeCloseTo(103, 1);
    expect(first).toBeGreaterThan(batch.databaseTimeMs! - 1_000);
    expect(first).toBeLessThanOrEqual(batch.databaseTimeMs!);

    const waiting = await waitingRows(ids);
    expect(waiting.map((row) => row.id)).toEqual(ids.slice(2));
    const slots = [second, ...waiting.map((row) => Number(row.slot_ms))];
    for (let i = 1; i < slots.length; i++) expect(slots[i] - slots[i - 1]).toBeCloseTo(103, 1);
    // Due again 100 ms before its slot, plus the time from the worker reading its clock to the
    // throttle's statement reading the database's (a few ms; 60 on a loaded machine), which
    // the database's time at the statement's end bounds.
    const claimTookMs = batch.databaseTimeMs! - claimedAt;
    for (const row of waiting) {
      expect(Number(row.due_before_slot_ms)).toBeGreaterThanOrEqual(99);
      expect(Number(row.due_before_slot_ms)).toBeLessThanOrEqual(100 + claimTookMs + 1);
    }
  });

  it('never gives two claims the same slot, however they interleave', async () => {
    const { ids } = await throttled(100, 40);
    // Three workers' claims, each on its own pool: a worker's claims run one at a time on its
    // claims' connection (PgPool.dedicatedSql), so one repository's three would not overlap.
    const pools = [1, 2].map(() => new PgPool({ url: worker.db.url, poolSize: 2 }));
    let batches;
    try {
      const [second, third] = pools.map((pool) => new DeliveryQueueRepository(pool));
      batches = await Promise.all([claim({ limit: 20 }), claim({ limit: 20 }, second), claim({ limit: 20 }, third)]);
    } finally {
      await Promise.all(pools.map((pool) => pool.onApplicationShutdown()));
    }
    // A delivery that each concurrent claim found locked by another (SKIP LOCKED) is left pending
    // and due, with no slot yet: the next claim takes it, as this one does.
    batches.push(await claim({ limit: 40 }));
    const held = batches.flatMap((batch) => batch.deliveries.map((d) => d.throttle!.slotMs));
    const waiting = await waitingRows(ids);
    expect(waiting.filter((row) => row.slot_ms === null)).toEqual([]);
    const reserved = waiting.map((row) => Number(row.slot_ms));
    expect(held.length + reserved.length).toBe(40);
    const slots = [...held, ...reserved].sort((a, b) => a - b);
    // 100/s: 10.3 ms apart (slots are microseconds; epoch milliseconds as doubles round a little).
    for (let i = 1; i < slots.length; i++) expect(slots[i] - slots[i - 1]).toBeGreaterThan(10.29);
  });

  it('keeps a reserved slot for its delivery (a claim that meets it early leaves it waiting for that slot); one that has passed is replaced by the next free slot', async () => {
    const { app, ids } = await throttled(1, 3);
    await claim(); // the first is held (and left in flight), the other two wait with slots 1.03 s and 2.06 s on
    const [kept, passed] = await waitingRows(ids);
    await worker.sql(`UPDATE delivery_queue SET due_at = now() - interval '1 second' WHERE delivery_id = $1`, [kept.id]);
    await worker.sql(
      `UPDATE delivery_queue SET due_at = now() - interval '1 second', throttle_slot_at = clock_timestamp() - interval '1 second'
        WHERE delivery_id = $1`,
      [passed.id],
    );
    const [{ next_slot_ms }] = await worker.sql<{ next_slot_ms: string }>(
      'SELECT extract(epoch FROM next_slot_at) * 1000 AS next_slot_ms FROM webhook_throttles WHERE application_id = $1',
      [app.applicationId],
    );

    const batch = await claim();
    // The kept slot is over a second ahead, past the horizon: it waits again for that same slot.
    expect(batch.deliveries).toEqual([]);
    const rows = await waitingRows(ids);
    expect(rows.find((row) => row.id === kept.id)!.slot_ms).toBe(kept.slot_ms);
    expect(Number(rows.find((row) => row.id === passed.id)!.slot_ms)).toBeCloseTo(Number(next_slot_ms), 1);
  });

  it('holds a reserved delivery whose slot has come, with that slot', async () => {
    const { ids } = await throttled(1, 2);
    await claim();
    const [waiting] = await waitingRows(ids);
    // The slot 140 ms ahead: inside the hold horizon (150 ms) now, and still usable (20 ms late
    // at most) for 160 ms, however busy the machine is between this statement and the claim.
    const [{ slot_ms }] = await worker.sql<{ slot_ms: string }>(
      `UPDATE delivery_queue SET due_at = now() - interval '1 second', throttle_slot_at = clock_timestamp() + interval '140 milliseconds'
        WHERE delivery_id = $1 RETURNING extract(epoch FROM throttle_slot_at) * 1000 AS slot_ms`,
      [waiting.id],
    );
    const batch = await claim();
    expect(batch.deliveries.map((d) => d.id)).toEqual([waiting.id]);
    expect(batch.deliveries[0].throttle!.slotMs).toBeCloseTo(Number(slot_ms), 2);
    const [row] = await worker.sql<{ held: boolean; throttle_slot_at: Date | null }>(
      'SELECT lease_until > now() AS held, throttle_slot_at FROM delivery_queue WHERE delivery_id = $1',
      [waiting.id],
    );
    expect(row).toEqual({ held: true, throttle_slot_at: null });
  });

  it('holds no more for a host than the worker has room for; the rest keep their slots and stay due', async () => {
    const { ids } = await throttled(1_000, 10);
    const batch = await claim({ hostsInFlight: new Map([['127.0.0.1', 13]]), hostCap: 16 });
    expect(batch.deliveries).toHaveLength(3);
    expect(batch.waiting).toBe(7);
    const due = await worker.sql<{ n: string }>(
      `SELECT count(*) AS n FROM delivery_queue
        WHERE delivery_id = ANY($1) AND lease_token IS NULL AND throttle_slot_at IS NOT NULL AND due_at <= now()`,
      [ids],
    );
    expect(Number(due[0].n)).toBe(7);
    // A host at its cap is not claimed for at all.
    const none = await claim({ hostsInFlight: new Map([['127.0.0.1', 16]]), hostCap: 16 });
    expect(none).toMatchObject({ deliveries: [], waiting: 0, databaseTimeMs: null });
  });

  it('hands a held delivery back with its slot (shutdown, or no room after all)', async () => {
    const { ids } = await throttled(1, 1);
    const token = randomUUID();
    const [held] = (await claim({ token })).deliveries;
    expect(held.id).toBe(ids[0]);
    expect(await queue.releaseKeepingSlot(held.id, token, held.throttle!.slot, new Date())).toBe(true);
    const [row] = await worker.sql<{ status: string; slot_ms: string }>(
      `SELECT CASE WHEN lease_token IS NULL THEN 'pending' ELSE 'sending' END AS status, extract(epoch FROM throttle_slot_at) * 1000 AS slot_ms
         FROM delivery_queue WHERE delivery_id = $1`,
      [held.id],
    );
    expect(row.status).toBe('pending');
    expect(Number(row.slot_ms)).toBeCloseTo(held.throttle!.slotMs, 2);
    expect(await queue.releaseKeepingSlot(held.id, token, held.throttle!.slot, new Date())).toBe(false);
  });

  it('claims deliveries of webhooks without a throttle at once, with no slot, beside throttled ones', async () => {
    const { ids: slow } = await throttled(1, 5);
    const free = await worker.application({ url: 'http://127.0.0.1:9/free' });
    const fast = [(await worker.publish(free))!, (await worker.publish(free))!];
    const batch = await claim();
    expect(
      batch.deliveries
        .filter((d) => d.throttle === null)
        .map((d) => d.id)
        .sort(),
    ).toEqual([...fast].sort());
    expect(batch.deliveries.filter((d) => d.throttle !== null).map((d) => d.id)).toEqual(slow.slice(0, 1));
    expect(batch.waiting).toBe(4);
  });

  it('leaves nothing waiting past the horizon after the throttle is removed', async () => {
    const { app, ids } = await throttled(1, 4);
    await claim();
    expect(await waitingRows(ids)).toHaveLength(3);
    await worker.app.get(WebhookThrottleRepository).set(app, { perSecond: null }, new Date(Date.now() + 1), testAudit);
    const batch = await claim();
    expect(batch.deliveries.map((d) => d.id).sort()).toEqual(ids.slice(1).sort());
    expect(batch.deliveries.every((d) => d.throttle === null)).toBe(true);
    const [{ ahead_ms }] = await worker.sql<{ ahead_ms: string }>(
      'SELECT extract(epoch FROM next_slot_at - clock_timestamp()) * 1000 AS ahead_ms FROM webhook_throttles WHERE application_id = $1',
      [app.applicationId],
    );
    expect(Number(ahead_ms)).toBeLessThanOrEqual(THROTTLE_HORIZON_MS);
  });
});
