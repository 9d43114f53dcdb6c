import { PgPool, RETENTION_BATCH_SIZE, RETENTION_LOCK_KEY } from '@herald/database/queue';
import { Sink } from '@herald/testing';
import { firstIdAt, type DeliveryStatus } from '@herald/core';
import { setDeliveryStatus } from '@herald/database/testing';
import { WorkerMetrics } from '../src/metrics/worker-metrics';
import { RetentionJob } from '../src/jobs/retention-job';
import { TestWorker } from './support/test-worker';

const DAY_MS = 24 * 60 * 60 * 1000;

/** PRODUCT.md §11: what is older than HERALD_RETENTION_DAYS goes, in batches; what is unfinished never does. */
describe('retention', () => {
  let worker: TestWorker;
  let sink: Sink;
  const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);
  const exists = async (table: 'deliveries' | 'events', id: string) =>
    (await worker.sql(`SELECT 1 FROM ${table} WHERE id = $1`, [id])).length === 1;
  /**
   * Makes the event `eventId` `days` old as if it had been published then: its created_at and its
   * id, a ULID whose first ten characters are its time (retention reads the age there). Its
   * deliveries follow the new id (the foreign key cascades). Returns the new id.
   */
  const ageEvent = async (eventId: string, days: number) => {
    const at = daysAgo(days);
    const [{ id }] = await worker.sql<{ id: string }>(
      `UPDATE events SET created_at = $2, id = $3 || substr(id, 15) WHERE id = $1 RETURNING id`,
      [eventId, at, firstIdAt('evt', at)],
    );
    return id;
  };

  beforeAll(async () => {
    sink = await new Sink().start();
    worker = await TestWorker.start({ HERALD_RETENTION_DAYS: '30' });
  });
  afterAll(async () => {
    await worker.close();
    await sink.close();
  });

  /** A delivery that was sent (one attempt), then moved to `status`, last changed and created `days` ago. */
  async function aged(days: number, status: DeliveryStatus, app: Awaited<ReturnType<TestWorker['application']>>) {
    const id = (await worker.publish(app))!;
    await worker.settled(app, id);
    const [{ event_id: eventId }] = await worker.sql<{ event_id: string }>('SELECT event_id FROM deliveries WHERE id = $1', [id]);
    await setDeliveryStatus(worker.db.url, id, status, ['updated_at = $3', 'created_at = $3'], [daysAgo(days)]);
    // Waiting for a retry a year away, or held by another worker for as long: never this test's worker's.
    await worker.sql(
      `UPDATE delivery_queue SET due_at = now() + interval '1 year', lease_until = CASE WHEN lease_token IS NOT NULL THEN now() + interval '1 year' END
        WHERE delivery_id = $1`,
      [id],
    );
    return { deliveryId: id, eventId: await ageEvent(eventId, days) };
  }

  it('removes finished deliveries, their attempts and their events past the period; keeps the rest', async () => {
    const app = await worker.application({ url: sink.url() });
    const succeeded = await aged(31, 'succeeded', app);
    const failed = await aged(31, 'failed', app);
    const cancelled = await aged(45, 'cancelled', app);
    const recent = await aged(29, 'succeeded', app);
    const pending = await aged(90, 'pending', app);
    const sending = await aged(90, 'sending', app);
    // A finished delivery changed recently (a recover, say) keeps its old event.
    const retried = await aged(40, 'succeeded', app);
    await worker.sql('UPDATE deliveries SET updated_at = $2 WHERE id = $1', [retried.deliveryId, daysAgo(1)]);
    // Events that made no delivery (no subscription to them): old goes, recent stays.
    const unsubscribed = await worker.application({ url: sink.url(), subscriptions: {} });
    await worker.publish(unsubscribed);
    await worker.publish(unsubscribed);
    const [oldLone, recentLone] = await worker.sql<{ id: string }>('SELECT id FROM events WHERE application_id = $1 ORDER BY id', [
      unsubscribed.applicationId,
    ]);
    oldLone.id = await ageEvent(oldLone.id, 31);
    // Portal links: expired or revoked before the period go; a working one and one that stopped recently stay.
    const link = (id: string, expiresDaysAgo: number, revokedDaysAgo: number | null) =>
      worker.sql(
        `INSERT INTO portal_links (id, application_id, token_hash, expires_at, created_at, revoked_at) VALUES ($1, $2, $1, $3, $3, $4)`,
        [id, app.applicationId, daysAgo(expiresDaysAgo), revokedDaysAgo === null ? null : daysAgo(revokedDaysAgo)],
      );
    await link('ptl_expired_long_ago', 31, null);
    await link('ptl_revoked_long_ago', -1, 35);
    await link('ptl_expired_recently', 2, null);
    await link('ptl_working', -1, null);
    const metrics = worker.inWorker(WorkerMetrics);
    const before = await metrics.registry.getSingleMetricAsString('herald_retention_rows_removed_total');
    expect(before).toMatch(/table="deliveries"} 0$/m);

    const removed = await worker.inWorker(RetentionJob).runOnce();

    expect(removed).toEqual({ deliveries: 3, attempts: 3, events: 4, portalLinks: 2, auditRecords: 0, statistics: 0 });
    for (const gone of [succeeded, failed, cancelled]) {
      expect(await exists('deliveries', gone.deliveryId)).toBe(false);
      expect(await exists('events', gone.eventId)).toBe(false);
      expect(await worker.sql('SELECT 1 FROM delivery_attempts WHERE delivery_id = $1', [gone.deliveryId])).toHaveLength(0);
    }
    expect(await exists('events', oldLone.id)).toBe(false);
    for (const kept of [recent, pending, sending, retried]) {
      expect(await exists('deliveries', kept.deliveryId)).toBe(true);
      expect(await exists('events', kept.eventId)).toBe(true);
    }
    expect(await worker.sql('SELECT 1 FROM delivery_attempts WHERE delivery_id = $1', [recent.deliveryId])).toHaveLength(1);
    expect(await exists('events', recentLone.id)).toBe(true);
    const after = await metrics.registry.getSingleMetricAsString('herald_retention_rows_removed_total');
    expect(after).toMatch(/table="deliveries"} 3$/m);
    expect(after).toMatch(/table="delivery_attempts"} 3$/m);
    expect(after).toMatch(/table="events"} 4$/m);
    expect(after).toMatch(/table="portal_links"} 2$/m);
    expect((await worker.sql<{ id: string }>('SELECT id FROM portal_links ORDER BY id')).map((row) => row.id)).toEqual([
      'ptl_expired_recently',
      'ptl_working',
    ]);

    // Nothing left to remove: a second pass removes nothing.
    expect(await worker.inWorker(RetentionJob).runOnce()).toEqual({
      deliveries: 0,
      attempts: 0,
      events: 0,
      portalLinks: 0,
      auditRecords: 0,
      statistics: 0,
    });
  });

  it(`works through more than one batch (${RETENTION_BATCH_SIZE}) and passes over old events that still wait`, async () => {
    const app = await worker.application({ url: sink.url() });
    const waiting = await aged(60, 'pending', app);
    const count = RETENTION_BATCH_SIZE * 2 + 11;
    // Old events, each with one finished delivery, built in SQL, their ids made at their times.
    const times = Array.from({ length: count }, (_, n) => new Date(daysAgo(40).getTime() + n * 1000));
    await worker.sql(
      `WITH made AS (
         INSERT INTO events (id, application_id, event_type, payload, created_at)
         SELECT id, $1, 'acw_start', '{}', at FROM unnest($2::text[], $3::timestamptz[]) AS t(id, at)
         RETURNING id, created_at
       )
       INSERT INTO deliveries (id, event_id, application_id, event_type, status, created_at, updated_at)
       SELECT 'dlv' || substr(id, 4), id, $1, 'acw_start', 'succeeded', created_at, created_at FROM made`,
      [app.applicationId, times.map((at, n) => `${firstIdAt('evt', at)}${String(n).padStart(16, '0')}`), times],
    );
    const removed = await worker.inWorker(RetentionJob).runOnce();
    expect(removed).toEqual({ deliveries: count, attempts: 0, events: count, portalLinks: 0, auditRecords: 0, statistics: 0 });
    expect(await exists('deliveries', waiting.deliveryId)).toBe(true);
    expect(await exists('events', waiting.eventId)).toBe(true);
  });

  it('removes audit records older than HERALD_AUDIT_RETENTION_DAYS (365 by default), and counts them', async () => {
    const made = await worker.sql<{ id: string; at: Date }>(
      `INSERT INTO audit_log (id, at, actor_type, actor_id, action, changes)
       SELECT 'aud_retention_' || n, now() - n * interval '100 days', 'system', 'test', 'webhook.updated', '{}' FROM generate_series(1, 5) AS n
       RETURNING id, at`,
    );
    expect(made).toHaveLength(5);
    const removed = await worker.inWorker(RetentionJob).runOnce();
    expect(removed).toMatchObject({ auditRecords: 2, statistics: 0 });
    const left = await worker.sql<{ id: string }>(`SELECT id FROM audit_log WHERE id LIKE 'aud_retention_%' ORDER BY id`);
    expect(left.map((row) => row.id)).toEqual(['aud_retention_1', 'aud_retention_2', 'aud_retention_3']);
    expect(await worker.inWorker(WorkerMetrics).registry.getSingleMetricAsString('herald_retention_rows_removed_total')).toMatch(
      /table="audit_log"} 2$/m,
    );
  });

  it('removes the hours of delivery statistics older than 400 days, and counts them (PRODUCT.md §16)', async () => {
    const app = await worker.application({ url: sink.url() });
    await worker.sql(
      `INSERT INTO delivery_stats (application_id, hour, event_type, succeeded)
       SELECT $1, date_trunc('hour', now() - n * interval '100 days', 'UTC'), 'acw_start', 1 FROM generate_series(0, 5) AS n`,
      [app.applicationId],
    );
    const removed = await worker.inWorker(RetentionJob).runOnce();
    expect(removed).toMatchObject({ statistics: 2 });
    const left = await worker.sql<{ n: number }>(`SELECT count(*)::int AS n FROM delivery_stats WHERE application_id = $1`, [
      app.applicationId,
    ]);
    expect(left).toEqual([{ n: 4 }]);
    expect(await worker.inWorker(WorkerMetrics).registry.getSingleMetricAsString('herald_retention_rows_removed_total')).toMatch(
      /table="delivery_stats"} 2$/m,
    );
  });

  it('does nothing while another process holds the retention lock', async () => {
    const app = await worker.application({ url: sink.url() });
    const old = await aged(31, 'succeeded', app);
    // The fixtures' own pool stands in for another worker process: its own connection, its own session.
    const elsewhere = await worker.app.get(PgPool).whileHoldingLock(RETENTION_LOCK_KEY, async () => {
      expect(await worker.inWorker(RetentionJob).runOnce()).toBeNull();
      return 'held';
    });
    expect(elsewhere).toBe('held');
    expect(await exists('deliveries', old.deliveryId)).toBe(true);
    expect(await worker.inWorker(RetentionJob).runOnce()).toMatchObject({ deliveries: 1 });
    expect(await exists('deliveries', old.deliveryId)).toBe(false);
  });
});
