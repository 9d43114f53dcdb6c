import { firstIdAt, type DeliveryStatus } from '@herald/core';
import { PgPool } from '../pg-pool';
import { setDeliveryStatus } from '../testing/delivery-state';
import { cloneDatabase, TestDatabase } from '../testing/test-databases';
import { testServerUrl, testTemplateDatabase } from '../testing/config/test-server';
import { openDatabase, sql } from '../testing/sql';
import { RemovedRows, RETENTION_LOCK_KEY, RetentionRepository } from './retention.repository';

const DAY = 24 * 60 * 60 * 1000;

/**
 * Retention's statements against a cloned database, rows written in SQL so each test states the
 * history it starts from: which deliveries, attempts, events and portal links a pass removes and
 * which it keeps, the keyset walk in batches, a replay racing the removal of its event, and the
 * advisory lock that keeps passes one at a time. Retention works on every application at once,
 * so each test starts from empty tables.
 */
describe('RetentionRepository', () => {
  let db: TestDatabase;
  let pool: PgPool;
  let retention: RetentionRepository;
  let nextApplication = 1;
  let nextRow = 0;

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    pool = new PgPool({ url: db.url, poolSize: 2 });
    retention = new RetentionRepository(pool);
    await sql(db.url, `INSERT INTO accounts (id, name) VALUES ('acc_retention', 'retention tests')`);
  });
  afterAll(async () => {
    await pool.onApplicationShutdown();
    await db.drop();
  });
  beforeEach(async () => {
    await sql(db.url, 'DELETE FROM delivery_queue');
    await sql(db.url, 'DELETE FROM delivery_attempts');
    await sql(db.url, 'DELETE FROM deliveries');
    await sql(db.url, 'DELETE FROM events');
    await sql(db.url, 'DELETE FROM portal_links');
  });

  async function application(): Promise<number> {
    const id = nextApplication++;
    await sql(db.url, `INSERT INTO applications (id, account_id, name) VALUES ($1, 'acc_retention', 'app')`, [id]);
    return id;
  }

  /**
   * An event of `applicationId` created at `createdAt`, its id made then as Herald makes ids (a
   * ULID: the time, then `random`, by default a new one); its id.
   */
  async function event(applicationId: number, createdAt: Date, random = String(nextRow++).padStart(16, '0')): Promise<string> {
    const id = `${firstIdAt('evt', createdAt)}${random}`;
    await sql(db.url, `INSERT INTO events (id, application_id, event_type, payload, created_at) VALUES ($1, $2, 'acw_start', '{}', $3)`, [
      id,
      applicationId,
      createdAt,
    ]);
    return id;
  }

  /**
   * A delivery of `eventId` made at the event's time, left in `status` at `updatedAt` (its queue
   * row kept as Herald keeps it), with `attempts` attempts; its id.
   */
  async function delivery(eventId: string, status: DeliveryStatus, updatedAt: Date, attempts = 0): Promise<string> {
    const id = `dlv_${nextRow++}`;
    await sql(
      db.url,
      `WITH d AS (
         INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
         SELECT $1, e.id, e.application_id, e.event_type, 'pending', e.created_at, e.created_at, e.created_at FROM events e WHERE e.id = $2
         RETURNING id, application_id, created_at
       )
       INSERT INTO delivery_queue (delivery_id, application_id, due_at) SELECT id, application_id, created_at FROM d`,
      [id, eventId],
    );
    await setDeliveryStatus(db.url, id, status, ['updated_at = $3'], [updatedAt]);
    await sql(
      db.url,
      `INSERT INTO delivery_attempts (delivery_id, number, started_at, duration_ms, url)
       SELECT $1, n, $2, 5, 'http://10.0.0.1:9/hook' FROM generate_series(1, $3::int) n`,
      [id, updatedAt, attempts],
    );
    return id;
  }

  const existing = async (table: 'events' | 'deliveries', ids: string[]) =>
    (await sql<{ id: string }>(db.url, `SELECT id FROM ${table} WHERE id = ANY($1) ORDER BY id`, [ids])).map((row) => row.id).sort();
  const attemptsOf = async (ids: string[]) =>
    (await sql<{ count: number }>(db.url, 'SELECT count(*)::int AS count FROM delivery_attempts WHERE delivery_id = ANY($1)', [ids]))[0]
      .count;

  it('removes the finished deliveries of old events with their attempts, and the old events left without any', async () => {
    const now = new Date();
    const cutoff = new Date(now.getTime() - 30 * DAY);
    const old = new Date(now.getTime() - 40 * DAY);
    const oldFinish = new Date(old.getTime() + DAY);
    const app = await application();

    const done = await event(app, old);
    const succeeded = await delivery(done, 'succeeded', oldFinish, 2);
    const failed = await delivery(done, 'failed', oldFinish, 3);
    const cancelled = await delivery(done, 'cancelled', oldFinish);
    const bare = await event(app, old);
    const recent = await event(app, new Date(now.getTime() - DAY));
    const recentDelivery = await delivery(recent, 'succeeded', now, 1);

    const removed = await retention.removeOlderThan(cutoff);

    expect(removed).toEqual({ deliveries: 3, attempts: 5, events: 2, portalLinks: 0, auditRecords: 0, statistics: 0 });
    expect(await existing('deliveries', [succeeded, failed, cancelled, recentDelivery])).toEqual([recentDelivery]);
    expect(await attemptsOf([succeeded, failed, cancelled])).toBe(0);
    expect(await attemptsOf([recentDelivery])).toBe(1);
    expect(await existing('events', [done, bare, recent])).toEqual([recent]);
  });

  it('keeps unfinished deliveries and those finished since the cutoff, with their old events and attempts', async () => {
    const now = new Date();
    const cutoff = new Date(now.getTime() - 30 * DAY);
    const old = new Date(now.getTime() - 40 * DAY);
    const app = await application();

    const waiting = await event(app, old);
    const pending = await delivery(waiting, 'pending', old, 2);
    const paused = await delivery(waiting, 'paused', old);
    const sending = await delivery(waiting, 'sending', old, 1);
    const retried = await event(app, old);
    // An old event's delivery that finished after the cutoff (a late retry, a manual attempt) keeps it.
    const finishedLately = await delivery(retried, 'failed', new Date(now.getTime() - DAY), 4);
    // One finished long ago beside an unfinished one: it goes, their event stays.
    const mixed = await event(app, old);
    const gone = await delivery(mixed, 'succeeded', old, 1);
    const stillQueued = await delivery(mixed, 'pending', old);

    const removed = await retention.removeOlderThan(cutoff);

    expect(removed).toEqual({ deliveries: 1, attempts: 1, events: 0, portalLinks: 0, auditRecords: 0, statistics: 0 });
    expect(await existing('deliveries', [pending, paused, sending, finishedLately, gone, stillQueued])).toEqual(
      [pending, paused, sending, finishedLately, stillQueued].sort(),
    );
    expect(await attemptsOf([pending, sending, finishedLately])).toBe(7);
    expect(await existing('events', [waiting, retried, mixed])).toEqual([waiting, retried, mixed].sort());
    // The queue is as it was: every unfinished delivery keeps its row.
    const queued = await sql(db.url, 'SELECT delivery_id FROM delivery_queue WHERE delivery_id = ANY($1)', [
      [pending, paused, sending, stillQueued],
    ]);
    expect(queued).toHaveLength(4);
  });

  it('walks every old event of every application in batches of batchSize, past events it keeps and events made in the same millisecond', async () => {
    const now = new Date();
    const cutoff = new Date(now.getTime() - 30 * DAY);
    const app = await application();
    const next = await application();
    // The two oldest keep unfinished deliveries: the walk goes on past them.
    const kept = [await event(app, new Date(now.getTime() - 50 * DAY)), await event(app, new Date(now.getTime() - 49 * DAY))];
    for (const id of kept) await delivery(id, 'pending', now);
    // Three in one millisecond, so a batch ends between ids of the same time (their random part orders them).
    const instant = new Date(now.getTime() - 45 * DAY);
    const same = [
      await event(app, instant, '000000000000000c'),
      await event(app, instant, '000000000000000a'),
      await event(app, instant, '000000000000000b'),
    ];
    const finished = [await event(app, new Date(now.getTime() - 40 * DAY)), await event(app, new Date(now.getTime() - 35 * DAY))];
    // The next application's, older than the first's: the walk takes applications in turn, not all by age.
    const nextOnes = [await event(next, new Date(now.getTime() - 60 * DAY)), await event(next, new Date(now.getTime() - 31 * DAY))];
    // Made after the cutoff: kept, however its row was written.
    const young = await event(next, new Date(now.getTime() - 29 * DAY));
    for (const id of [...same, ...finished, ...nextOnes]) await delivery(id, 'succeeded', new Date(now.getTime() - 31 * DAY), 1);
    const batches: RemovedRows[] = [];

    const removed = await retention.removeOlderThan(cutoff, { batchSize: 2, afterBatch: (batch) => void batches.push(batch) });

    expect(removed).toEqual({ deliveries: 7, attempts: 7, events: 7, portalLinks: 0, auditRecords: 0, statistics: 0 });
    expect(await existing('events', [...kept, ...same, ...finished, ...nextOnes, young])).toEqual([...kept, young].sort());
    // 9 old events, 2 a batch, by key: five batches (the last one short), then the portal links.
    expect(batches).toEqual([
      { deliveries: 0, attempts: 0, events: 0, portalLinks: 0, auditRecords: 0, statistics: 0 },
      { deliveries: 2, attempts: 2, events: 2, portalLinks: 0, auditRecords: 0, statistics: 0 },
      { deliveries: 2, attempts: 2, events: 2, portalLinks: 0, auditRecords: 0, statistics: 0 },
      { deliveries: 2, attempts: 2, events: 2, portalLinks: 0, auditRecords: 0, statistics: 0 },
      { deliveries: 1, attempts: 1, events: 1, portalLinks: 0, auditRecords: 0, statistics: 0 },
      { deliveries: 0, attempts: 0, events: 0, portalLinks: 0, auditRecords: 0, statistics: 0 },
    ]);
  });

  it('keeps an old event that a replay gives a delivery while the pass removes it, and removes the rest of its batch', async () => {
    const now = new Date();
    const cutoff = new Date(now.getTime() - 30 * DAY);
    const old = new Date(now.getTime() - 40 * DAY);
    const app = await application();
    const replayed = await event(app, old);
    const others = [await event(app, old), await event(app, old)];
    const replay = await openDatabase(db.url);
    try {
      // The replay's insert holds a key-share lock on the event until it commits, unseen by the pass's snapshot.
      await replay.query('BEGIN');
      await replay.query(
        `WITH d AS (
           INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
           VALUES ('dlv_replay', $1, $2, 'acw_start', 'pending', $3, $3, $3)
           RETURNING id, application_id, created_at
         )
         INSERT INTO delivery_queue (delivery_id, application_id, due_at) SELECT id, application_id, created_at FROM d`,
        [replayed, app, now],
      );
      const pass = retention.removeOlderThan(cutoff);
      await waitUntil(async () => (await sql(db.url, waitingForLock)).length > 0);
      await replay.query('COMMIT');

      expect(await pass).toEqual({ deliveries: 0, attempts: 0, events: 2, portalLinks: 0, auditRecords: 0, statistics: 0 });
    } finally {
      await replay.close();
    }
    expect(await existing('events', [replayed, ...others])).toEqual([replayed]);
    expect(await existing('deliveries', ['dlv_replay'])).toEqual(['dlv_replay']);
  });

  it('removes portal links expired or revoked before the cutoff, and keeps the others', async () => {
    const now = new Date();
    const cutoff = new Date(now.getTime() - 30 * DAY);
    const app = await application();
    const links: [string, Date, Date | null][] = [
      ['ptl_expired', new Date(cutoff.getTime() - DAY), null],
      ['ptl_revoked', new Date(cutoff.getTime() + DAY), new Date(cutoff.getTime() - DAY)],
      ['ptl_expired_since', new Date(cutoff.getTime() + DAY), null],
      ['ptl_revoked_since', new Date(now.getTime() + DAY), new Date(cutoff.getTime() + 1)],
      ['ptl_working', new Date(now.getTime() + DAY), null],
    ];
    for (const [id, expiresAt, revokedAt] of links) {
      await sql(db.url, `INSERT INTO portal_links (id, application_id, token_hash, expires_at, revoked_at) VALUES ($1, $2, $1, $3, $4)`, [
        id,
        app,
        expiresAt,
        revokedAt,
      ]);
    }

    expect(await retention.removeOlderThan(cutoff)).toEqual({
      deliveries: 0,
      attempts: 0,
      events: 0,
      portalLinks: 2,
      auditRecords: 0,
      statistics: 0,
    });
    const left = await sql<{ id: string }>(db.url, 'SELECT id FROM portal_links WHERE application_id = $1 ORDER BY id', [app]);
    expect(left.map((row) => row.id)).toEqual(['ptl_expired_since', 'ptl_revoked_since', 'ptl_working']);
  });

  it('removes audit records older than their own cutoff, in batches, oldest first, and none without one (PRODUCT.md §16)', async () => {
    await sql(db.url, 'DELETE FROM audit_log');
    const now = new Date();
    const auditCutoff = new Date(now.getTime() - 365 * DAY);
    const ages = [400, 380, 366, 364, 10];
    for (const [n, days] of ages.entries()) {
      await sql(
        db.url,
        `INSERT INTO audit_log (id, at, actor_type, actor_id, action, changes) VALUES ($1, $2, 'system', 'test', 'webhook.updated', '{}')`,
        [`aud_${n}`, new Date(now.getTime() - days * DAY)],
      );
    }
    const cutoff = new Date(now.getTime() - 30 * DAY);
    // Events' retention alone leaves the audit log as it is, however old.
    expect((await retention.removeOlderThan(cutoff))?.auditRecords).toBe(0);

    const batches: number[] = [];
    const removed = await retention.removeOlderThan(cutoff, {
      auditCutoff,
      batchSize: 2,
      afterBatch: (batch) => void (batch.auditRecords > 0 && batches.push(batch.auditRecords)),
    });
    expect(removed).toEqual({ deliveries: 0, attempts: 0, events: 0, portalLinks: 0, auditRecords: 3, statistics: 0 });
    expect(batches).toEqual([2, 1]);
    const left = await sql<{ id: string }>(db.url, 'SELECT id FROM audit_log ORDER BY id');
    expect(left.map((row) => row.id)).toEqual(['aud_3', 'aud_4']);
  });

  it('removes the hours of delivery statistics older than their own cutoff, in batches, and none without one (PRODUCT.md §16)', async () => {
    const now = new Date();
    const statisticsCutoff = new Date(now.getTime() - 400 * DAY);
    const hour = (daysAgo: number) => new Date(Math.floor((now.getTime() - daysAgo * DAY) / 3_600_000) * 3_600_000);
    const app = await application();
    for (const [eventType, daysAgo] of [
      ['acw_start', 500],
      ['voice_campaign_activate', 500],
      ['acw_start', 401],
      ['acw_start', 399],
      ['acw_start', 1],
    ] as const) {
      await sql(db.url, `INSERT INTO delivery_stats (application_id, hour, event_type, events, succeeded) VALUES ($1, $2, $3, 1, 1)`, [
        app,
        hour(daysAgo),
        eventType,
      ]);
    }
    const cutoff = new Date(now.getTime() - 30 * DAY);
    // Events' retention alone leaves statistics as they are.
    expect((await retention.removeOlderThan(cutoff))?.statistics).toBe(0);

    const batches: number[] = [];
    const removed = await retention.removeOlderThan(cutoff, {
      statisticsCutoff,
      batchSize: 2,
      afterBatch: (batch) => void (batch.statistics > 0 && batches.push(batch.statistics)),
    });
    expect(removed).toEqual({ deliveries: 0, attempts: 0, events: 0, portalLinks: 0, auditRecords: 0, statistics: 3 });
    expect(batches).toEqual([2, 1]);
    const left = await sql<{ hour: Date }>(db.url, 'SELECT hour FROM delivery_stats WHERE application_id = $1 ORDER BY hour', [app]);
    expect(left.map((row) => row.hour)).toEqual([hour(399), hour(1)]);
  });

  it('does nothing and answers null while another session holds the lock, and lets go of it after a pass, even a failed one', async () => {
    const now = new Date();
    const cutoff = new Date(now.getTime() - 30 * DAY);
    const app = await application();
    const old = await event(app, new Date(now.getTime() - 40 * DAY));
    const other = await openDatabase(db.url);
    try {
      await other.query('SELECT pg_advisory_lock($1)', [RETENTION_LOCK_KEY]);
      expect(await retention.removeOlderThan(cutoff)).toBeNull();
      expect(await existing('events', [old])).toEqual([old]);
      await other.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_KEY]);

      // A pass stopped by its caller (afterBatch throws) still releases the lock.
      await expect(
        retention.removeOlderThan(cutoff, {
          afterBatch: () => {
            throw new Error('stop');
          },
        }),
      ).rejects.toThrow('stop');
      const [{ locked }] = await other.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [RETENTION_LOCK_KEY]);
      expect(locked).toBe(true);
      await other.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_KEY]);
    } finally {
      await other.close();
    }
    // The stopped pass had removed its first batch already; a full one finds nothing left.
    expect(await existing('events', [old])).toEqual([]);
    expect(await retention.removeOlderThan(cutoff)).toEqual({
      deliveries: 0,
      attempts: 0,
      events: 0,
      portalLinks: 0,
      auditRecords: 0,
      statistics: 0,
    });
  });
});

/** Sessions of this database waiting for a lock another holds. */
const waitingForLock = `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;

/** Polls `condition` every 10 ms, for at most 10 s. */
async function waitUntil(condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the condition');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
