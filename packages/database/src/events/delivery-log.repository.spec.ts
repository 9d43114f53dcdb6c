import { firstIdAt, type DeliveryStatus } from '@herald/core';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { PgPool, SqlQuery } from '../pg-pool';
import { ApplicationScope } from '../records';
import { shownStatus } from '../queue/queue.sql';
import { setDeliveryStatus } from '../testing/delivery-state';
import { cloneDatabase, TestDatabase } from '../testing/test-databases';
import { testServerUrl, testTemplateDatabase } from '../testing/config/test-server';
import { openDatabase, sql } from '../testing/sql';
import { explainAnalyze, rowsRead } from '../testing/plans';
import { DeliveryLogRepository, RECOVER_BATCH_SIZE } from './delivery-log.repository';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/**
 * The delivery log's statements against a cloned database, rows written in SQL so each test
 * states the deliveries it starts from (both tables kept as Herald keeps them): the log and its
 * filters, `sending` read from the queue's lease, counts, one delivery with its attempts, a
 * manual attempt in each state, recover's batches and filters, and cancelling what waits. Each
 * test has an application of its own.
 */
describe('DeliveryLogRepository', () => {
  let db: TestDatabase;
  let pool: PgPool;
  let log: DeliveryLogRepository;
  let nextApplication = 1;
  let nextRow = 0;

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    pool = new PgPool({ url: db.url, poolSize: 2 });
    log = new DeliveryLogRepository(pool, new DeliveryNotifier(pool));
    await sql(db.url, `INSERT INTO accounts (id, name) VALUES ('acc_log', 'delivery log tests')`);
  });
  afterAll(async () => {
    await pool.onApplicationShutdown();
    await db.drop();
  });

  const scopeOf = (applicationId: number) => ({ applicationId, accountId: 'acc_log' }) as ApplicationScope;

  async function application(): Promise<{ id: number; scope: ApplicationScope }> {
    const id = nextApplication++;
    await sql(db.url, `INSERT INTO applications (id, account_id, name) VALUES ($1, 'acc_log', 'app')`, [id]);
    return { id, scope: scopeOf(id) };
  }

  /** An id of `prefix` made at `at`, after every id made before it (ids are time-ordered, as Herald's are). */
  const idAt = (prefix: 'evt' | 'dlv', at: Date) => `${firstIdAt(prefix, at)}${String(nextRow++).padStart(16, '0')}`;

  /**
   * `count` deliveries of `applicationId`, each of its own event, made at `createdAt` and left in
   * `status` with both tables as Herald keeps them; their ids, oldest first.
   */
  async function deliveries(
    applicationId: number,
    status: DeliveryStatus,
    count = 1,
    options: {
      createdAt?: Date;
      eventType?: string;
      destination?: 'webhook' | 'operational';
      attemptCount?: number;
      ignoresSubscription?: boolean;
    } = {},
  ): Promise<string[]> {
    const at = options.createdAt ?? new Date(Date.now() - HOUR);
    const events = Array.from({ length: count }, () => idAt('evt', at));
    const ids = Array.from({ length: count }, () => idAt('dlv', at));
    const operational = options.destination === 'operational';
    await sql(
      db.url,
      `WITH made AS (
         SELECT * FROM unnest($1::text[], $2::text[]) AS m(event_id, delivery_id)
       ), e AS (
         INSERT INTO events (id, application_id, event_type, payload, created_at) SELECT event_id, $3, $4, '{}', $5 FROM made
       ), d AS (
         INSERT INTO deliveries (id, event_id, application_id, event_type, status, destination, attempt_count, ignores_subscription,
                                 next_attempt_at, created_at, updated_at)
         SELECT delivery_id, event_id, $3, $4, 'pending', $6, $7, $8, $5, $5, $5 FROM made
         RETURNING id, application_id, destination, created_at
       )
       INSERT INTO delivery_queue (delivery_id, application_id, destination, due_at) SELECT id, application_id, destination, created_at FROM d`,
      [
        events,
        ids,
        applicationId,
        options.eventType ?? (operational ? 'delivery.exhausted' : 'acw_start'),
        at,
        operational ? 'operational' : 'webhook',
        options.attemptCount ?? 0,
        options.ignoresSubscription ?? false,
      ],
    );
    if (status !== 'pending') await setDeliveryStatus(db.url, ids, status);
    return ids;
  }

  /** `count` failed deliveries of `applicationId` made at `createdAt`, of one event, in one statement (out of the queue, as finished ones are). */
  async function manyFailed(applicationId: number, count: number, createdAt: Date): Promise<void> {
    const eventId = idAt('evt', createdAt);
    await sql(db.url, `INSERT INTO events (id, application_id, event_type, payload, created_at) VALUES ($1, $2, 'acw_start', '{}', $3)`, [
      eventId,
      applicationId,
      createdAt,
    ]);
    await sql(
      db.url,
      `INSERT INTO deliveries (id, event_id, application_id, event_type, status, attempt_count, created_at, updated_at)
       SELECT $1 || lpad(n::text, 16, '0'), $2, $3, 'acw_start', 'failed', 4, $4, $4 FROM generate_series(1, $5::int) n`,
      [firstIdAt('dlv', createdAt), eventId, applicationId, createdAt, count],
    );
  }

  /** Each delivery as stored and as the API shows it, with its queue row (null columns once out of the queue). */
  const rows = (ids: string[]) =>
    sql<{
      id: string;
      status: string;
      stored: string;
      manual_attempt: boolean;
      next_attempt_at: Date | null;
      updated_at: Date;
      attempt_count: number;
      due_at: Date | null;
      paused: boolean | null;
      lease_token: string | null;
    }>(
      db.url,
      `SELECT d.id, ${shownStatus('d')} AS status, d.status::text AS stored, d.manual_attempt, d.next_attempt_at, d.updated_at,
              d.attempt_count, q.due_at, q.paused, q.lease_token
         FROM deliveries d LEFT JOIN delivery_queue q ON q.delivery_id = d.id WHERE d.id = ANY($1) ORDER BY d.id`,
      [ids],
    );
  const statuses = async (ids: string[]) => (await rows(ids)).map((row) => row.status);
  const newestFirst = (ids: string[]) => [...ids].sort().reverse();

  /** One delivery in each status the API shows, and an operator's notice about the application (never in its log). */
  async function oneOfEach(applicationId: number) {
    const [pending] = await deliveries(applicationId, 'pending');
    // Its lease ran out: pending again, whatever its token says.
    const [expired] = await deliveries(applicationId, 'pending');
    await sql(db.url, `UPDATE delivery_queue SET lease_token = 'gone', lease_until = now() - interval '1 minute' WHERE delivery_id = $1`, [
      expired,
    ]);
    const [sending] = await deliveries(applicationId, 'sending');
    const [succeeded] = await deliveries(applicationId, 'succeeded');
    const [failed] = await deliveries(applicationId, 'failed');
    const [cancelled] = await deliveries(applicationId, 'cancelled');
    const [paused] = await deliveries(applicationId, 'paused');
    const [notice] = await deliveries(applicationId, 'pending', 1, { destination: 'operational' });
    return { pending, expired, sending, succeeded, failed, cancelled, paused, notice };
  }

  describe('list, counts and find', () => {
    it('lists newest first under each status filter, sending read from a live lease, never the operator’s notices', async () => {
      const { id, scope } = await application();
      const d = await oneOfEach(id);
      const ids = (page: { items: { id: string }[] }) => page.items.map((item) => item.id);

      const all = await log.list(scope, {}, 50, null);
      expect(ids(all)).toEqual(newestFirst([d.pending, d.expired, d.sending, d.succeeded, d.failed, d.cancelled, d.paused]));
      expect(all.nextCursor).toBeNull();

      const expected: Record<DeliveryStatus, string[]> = {
        pending: [d.pending, d.expired],
        sending: [d.sending],
        succeeded: [d.succeeded],
        failed: [d.failed],
        cancelled: [d.cancelled],
        paused: [d.paused],
      };
      for (const [status, matching] of Object.entries(expected) as [DeliveryStatus, string[]][]) {
        expect([status, ids(await log.list(scope, { status }, 50, null))]).toEqual([status, newestFirst(matching)]);
      }
    });

    it('returns each delivery as its record', async () => {
      const { id, scope } = await application();
      const createdAt = new Date(Date.now() - 2 * HOUR);
      const [delivery] = await deliveries(id, 'sending', 1, { createdAt, eventType: 'voice_campaign_activate', attemptCount: 2 });
      const [{ event_id: eventId }] = await sql(db.url, 'SELECT event_id FROM deliveries WHERE id = $1', [delivery]);

      expect((await log.list(scope, {}, 50, null)).items).toEqual([
        {
          id: delivery,
          eventId,
          eventType: 'voice_campaign_activate',
          status: 'sending',
          attemptCount: 2,
          nextAttemptAt: createdAt,
          createdAt,
        },
      ]);
    });

    it('pages by the last id of the page before, and filters by event type and creation time', async () => {
      const { id, scope } = await application();
      const t0 = new Date(Date.now() - 10 * HOUR);
      const at = (minutes: number) => new Date(t0.getTime() + minutes * MINUTE);
      const made: string[] = [];
      for (let i = 0; i < 5; i++) {
        made.push(
          ...(await deliveries(id, 'succeeded', 1, { createdAt: at(i), eventType: i % 2 ? 'voice_campaign_activate' : 'acw_start' })),
        );
      }
      const ids = (page: { items: { id: string }[] }) => page.items.map((item) => item.id);

      const first = await log.list(scope, {}, 2, null);
      expect([ids(first), first.nextCursor]).toEqual([[made[4], made[3]], made[3]]);
      const second = await log.list(scope, {}, 2, first.nextCursor);
      expect([ids(second), second.nextCursor]).toEqual([[made[2], made[1]], made[1]]);
      const last = await log.list(scope, {}, 2, second.nextCursor);
      expect([ids(last), last.nextCursor]).toEqual([[made[0]], null]);

      expect(ids(await log.list(scope, { eventType: 'voice_campaign_activate' }, 50, null))).toEqual([made[3], made[1]]);
      expect(ids(await log.list(scope, { since: at(1), until: at(3) }, 50, null))).toEqual([made[2], made[1]]);
      expect(ids(await log.list(scope, { status: 'succeeded', eventType: 'acw_start', since: at(1) }, 1, null))).toEqual([made[4]]);
    });

    it('counts the application’s deliveries by the status the API shows, with the log’s filters', async () => {
      const { id, scope } = await application();
      await oneOfEach(id);
      const old = new Date(Date.now() - 5 * HOUR);
      await deliveries(id, 'failed', 2, { createdAt: old, eventType: 'voice_campaign_activate' });
      const other = await application();
      await deliveries(other.id, 'failed', 3);

      expect(await log.countByStatus(scope, {})).toEqual({ pending: 2, sending: 1, succeeded: 1, failed: 3, cancelled: 1, paused: 1 });
      expect(await log.countByStatus(scope, { eventType: 'voice_campaign_activate' })).toEqual({ failed: 2 });
      expect(await log.countByStatus(scope, { until: new Date(old.getTime() + 1) })).toEqual({ failed: 2 });
      expect(await log.countByStatus(scope, { since: new Date(old.getTime() + 1) })).toEqual({
        pending: 2,
        sending: 1,
        succeeded: 1,
        failed: 1,
        cancelled: 1,
        paused: 1,
      });
    });

    it('finds a delivery with its attempts in order and their headers as sent, and only the application’s own', async () => {
      const { id, scope } = await application();
      const [delivery] = await deliveries(id, 'failed', 1, { attemptCount: 2 });
      const [notice] = await deliveries(id, 'failed', 1, { destination: 'operational' });
      const first = new Date(Date.now() - 30 * MINUTE);
      const second = new Date(Date.now() - 20 * MINUTE);
      await sql(
        db.url,
        `INSERT INTO delivery_attempts (delivery_id, number, started_at, duration_ms, url, response_status, response_excerpt, error, next_attempt_at, request_headers)
         VALUES ($1, 2, $3, 40, 'http://10.0.0.2:9/hook', 500, 'oops', NULL, NULL, '{"z-last":"1","a-first":"2"}'),
                ($1, 1, $2, 3000, 'http://10.0.0.1:9/hook', NULL, NULL, 'timeout', $3, NULL)`,
        [delivery, first, second],
      );

      const found = await log.find(scope, delivery);

      expect(found).toMatchObject({ id: delivery, status: 'failed', attemptCount: 2 });
      expect(found?.attempts).toEqual([
        {
          number: 1,
          startedAt: first,
          durationMs: 3000,
          url: 'http://10.0.0.1:9/hook',
          responseStatus: null,
          responseExcerpt: null,
          error: 'timeout',
          nextAttemptAt: second,
          requestHeaders: null,
        },
        {
          number: 2,
          startedAt: second,
          durationMs: 40,
          url: 'http://10.0.0.2:9/hook',
          responseStatus: 500,
          responseExcerpt: 'oops',
          error: null,
          nextAttemptAt: null,
          requestHeaders: { 'z-last': '1', 'a-first': '2' },
        },
      ]);
      expect(Object.keys(found!.attempts[1].requestHeaders!)).toEqual(['z-last', 'a-first']);
      expect((await log.find(scope, (await deliveries(id, 'pending'))[0]))?.attempts).toEqual([]);
      expect(await log.find(scope, notice)).toBeNull();
      expect(await log.find((await application()).scope, delivery)).toBeNull();

      // The log's last attempt of each, for the application's own deliveries only.
      const latest = await log.lastAttempts(scope, [delivery, notice, 'dlv_unknown']);
      expect([...latest.entries()]).toEqual([[delivery, { startedAt: second, responseStatus: 500, error: null }]]);
      expect((await log.lastAttempts((await application()).scope, [delivery])).size).toBe(0);
      expect((await log.lastAttempts(scope, [])).size).toBe(0);
    });
  });

  describe('requestAttempt', () => {
    it('gives a failed or succeeded delivery exactly one more attempt: back in the queue, due now', async () => {
      const { id, scope } = await application();
      const [failed] = await deliveries(id, 'failed', 1, { attemptCount: 6 });
      const [succeeded] = await deliveries(id, 'succeeded', 1, { attemptCount: 1 });
      const now = new Date();

      const retried = await log.requestAttempt(scope, failed, now);
      expect(retried).toEqual({
        before: 'failed',
        after: expect.objectContaining({ id: failed, status: 'pending', attemptCount: 6, nextAttemptAt: now }),
      });
      expect((await log.requestAttempt(scope, succeeded, now))?.before).toBe('succeeded');

      expect(
        (await rows([failed, succeeded])).map((r) => [r.status, r.manual_attempt, r.next_attempt_at, r.updated_at, r.due_at, r.paused]),
      ).toEqual([
        ['pending', true, now, now, now, false],
        ['pending', true, now, now, now, false],
      ]);
    });

    it('brings a pending delivery’s next attempt forward and keeps its schedule after, a manual one staying manual', async () => {
      const { id, scope } = await application();
      const [scheduled] = await deliveries(id, 'pending', 1, { attemptCount: 2 });
      const later = new Date(Date.now() + HOUR);
      await sql(db.url, 'UPDATE delivery_queue SET due_at = $2 WHERE delivery_id = $1', [scheduled, later]);
      await sql(db.url, 'UPDATE deliveries SET next_attempt_at = $2 WHERE id = $1', [scheduled, later]);
      const now = new Date();

      expect(await log.requestAttempt(scope, scheduled, now)).toEqual({
        before: 'pending',
        after: expect.objectContaining({ id: scheduled, status: 'pending', attemptCount: 2, nextAttemptAt: now }),
      });
      // Not a manual attempt: if it fails, its retry schedule goes on.
      expect((await rows([scheduled])).map((r) => [r.status, r.manual_attempt, r.next_attempt_at, r.due_at])).toEqual([
        ['pending', false, now, now],
      ]);

      // A failed delivery asked for twice before a worker takes it: still its one manual attempt.
      const [failed] = await deliveries(id, 'failed', 1, { attemptCount: 6 });
      await log.requestAttempt(scope, failed, now);
      const again = new Date(now.getTime() + 1_000);
      expect((await log.requestAttempt(scope, failed, again))?.before).toBe('pending');
      expect((await rows([failed])).map((r) => [r.status, r.manual_attempt, r.due_at])).toEqual([['pending', true, again]]);
    });

    it('leaves a sending, cancelled or paused delivery as it is and says which it was; null for another application’s', async () => {
      const { id, scope } = await application();
      const [sending] = await deliveries(id, 'sending');
      const [cancelled] = await deliveries(id, 'cancelled');
      const [paused] = await deliveries(id, 'paused');
      const before = await rows([sending, cancelled, paused]);
      const now = new Date();

      expect((await log.requestAttempt(scope, sending, now))?.before).toBe('sending');
      expect((await log.requestAttempt(scope, cancelled, now))?.before).toBe('cancelled');
      expect(await log.requestAttempt(scope, paused, now)).toEqual({
        before: 'paused',
        after: expect.objectContaining({ status: 'paused' }),
      });
      expect(await log.requestAttempt((await application()).scope, sending, now)).toBeNull();
      expect(await log.requestAttempt(scope, 'dlv_unknown', now)).toBeNull();

      expect(await rows([sending, cancelled, paused])).toEqual(before);
    });

    it('takes a delivery whose queue row a worker has locked this instant as being sent, without waiting for it', async () => {
      const { id, scope } = await application();
      const [pending] = await deliveries(id, 'pending');
      const before = await rows([pending]);
      const worker = await openDatabase(db.url);
      try {
        await worker.query('BEGIN');
        await worker.query('SELECT 1 FROM delivery_queue WHERE delivery_id = $1 FOR UPDATE', [pending]);

        expect((await log.requestAttempt(scope, pending, new Date()))?.before).toBe('sending');
      } finally {
        await worker.query('ROLLBACK');
        await worker.close();
      }
      expect(await rows([pending])).toEqual(before);
    });
  });

  describe('recover', () => {
    it('requeues the failed deliveries created in [since, until), each as one manual attempt due now, and nothing else', async () => {
      const { id, scope } = await application();
      const since = new Date(Date.now() - 5 * HOUR);
      const until = new Date(Date.now() - 2 * HOUR);
      const inRange = new Date(since.getTime() + HOUR);
      const failed = [
        ...(await deliveries(id, 'failed', 2, { createdAt: since, attemptCount: 4 })),
        ...(await deliveries(id, 'failed', 1, { createdAt: inRange, eventType: 'voice_campaign_activate' })),
      ];
      const untouched = [
        ...(await deliveries(id, 'failed', 1, { createdAt: new Date(since.getTime() - 1) })),
        ...(await deliveries(id, 'failed', 1, { createdAt: until })),
        ...(await deliveries(id, 'succeeded', 1, { createdAt: inRange })),
        ...(await deliveries(id, 'cancelled', 1, { createdAt: inRange })),
        ...(await deliveries(id, 'failed', 1, { createdAt: inRange, destination: 'operational' })),
      ];
      const [pending] = await deliveries(id, 'pending', 1, { createdAt: inRange });
      const other = await application();
      const [otherFailed] = await deliveries(other.id, 'failed', 1, { createdAt: inRange });
      const before = await rows([...untouched, pending, otherFailed]);
      const now = new Date();

      expect(await log.recover(scope, { since, until }, now)).toBe(3);

      expect((await rows(failed)).map((r) => [r.status, r.manual_attempt, r.next_attempt_at, r.due_at, r.paused, r.attempt_count])).toEqual(
        [
          ['pending', true, now, now, false, 4],
          ['pending', true, now, now, false, 4],
          ['pending', true, now, now, false, 0],
        ],
      );
      expect(await rows([...untouched, pending, otherFailed])).toEqual(before);
    });

    it('requeues only the event type asked for', async () => {
      const { id, scope } = await application();
      const since = new Date(Date.now() - 5 * HOUR);
      const [acw] = await deliveries(id, 'failed', 1, { createdAt: since });
      const [voice] = await deliveries(id, 'failed', 1, { createdAt: since, eventType: 'voice_campaign_activate' });

      expect(await log.recover(scope, { since, until: new Date(), eventType: 'voice_campaign_activate' }, new Date())).toBe(1);
      expect(await statuses([acw, voice])).toEqual(['failed', 'pending']);
    });

    it('walks more failed deliveries than one batch holds', async () => {
      const { id, scope } = await application();
      const since = new Date(Date.now() - 5 * HOUR);
      const count = RECOVER_BATCH_SIZE + 7;
      await manyFailed(id, count, since);

      expect(await log.recover(scope, { since, until: new Date() }, new Date())).toBe(count);
      const queued = await sql(db.url, 'SELECT count(*)::int AS count FROM delivery_queue WHERE application_id = $1 AND NOT paused', [id]);
      expect(queued).toEqual([{ count }]);
    });

    it('requeues each delivery once when two recovers of the same range run at once', async () => {
      const { id, scope } = await application();
      const since = new Date(Date.now() - 5 * HOUR);
      const count = 2 * RECOVER_BATCH_SIZE + 500;
      await manyFailed(id, count, since);
      const range = { since, until: new Date() };

      // The pool has two connections: each recover's batches run on one of them, side by side.
      const [one, two] = await Promise.all([log.recover(scope, range, new Date()), log.recover(scope, range, new Date())]);

      expect(one + two).toBe(count);
      const states = await sql(
        db.url,
        `SELECT d.status::text, count(q.delivery_id)::int AS queued, count(*)::int AS count
           FROM deliveries d LEFT JOIN delivery_queue q ON q.delivery_id = d.id WHERE d.application_id = $1 GROUP BY 1`,
        [id],
      );
      expect(states).toEqual([{ status: 'pending', queued: count, count }]);
    });
  });

  describe('cancelPending', () => {
    it('cancels what waits (pending or paused), and leaves what a worker holds, what finished, notices and other applications', async () => {
      const { id, scope } = await application();
      const d = await oneOfEach(id);
      const other = await application();
      const [otherPending] = await deliveries(other.id, 'pending');
      const untouched = [d.sending, d.succeeded, d.failed, d.cancelled, d.notice, otherPending];
      const before = await rows(untouched);
      const now = new Date();

      expect(await log.cancelPending(scope, now)).toBe(3);

      expect((await rows([d.pending, d.expired, d.paused])).map((r) => [r.status, r.next_attempt_at, r.updated_at, r.due_at])).toEqual([
        ['cancelled', null, now, null],
        ['cancelled', null, now, null],
        ['cancelled', null, now, null],
      ]);
      expect(await rows(untouched)).toEqual(before);
    });

    it('with an event type, cancels only deliveries of that type, and never a test ping', async () => {
      const { id, scope } = await application();
      const [acw] = await deliveries(id, 'pending');
      const [voice] = await deliveries(id, 'pending', 1, { eventType: 'voice_campaign_activate' });
      const [ping] = await deliveries(id, 'pending', 1, { ignoresSubscription: true });

      expect(await log.cancelPending(scope, new Date(), 'acw_start')).toBe(1);
      expect(await statuses([acw, voice, ping])).toEqual(['cancelled', 'pending', 'pending']);
    });
  });
  describe('plans', () => {
    /** A pool that keeps the text and values of each statement the repository sends through `sql`. */
    class RecordingPool extends PgPool {
      readonly statements: { text: string; values: unknown[] }[] = [];
      constructor(url: string) {
        super({ url, poolSize: 1 });
        const run = this.sql;
        const recording = ((text, values = []) => {
          if (typeof text === 'string') this.statements.push({ text, values });
          return run(text, values);
        }) as SqlQuery;
        Object.assign(this, { sql: recording });
      }
    }

    it('reads a page, a delivery, the counts and the last attempts by key while PostgreSQL believes the queue empty', async () => {
      // A database of its own: the queue's statistics must be the ones this test makes, and no
      // ANALYZE may run but the test's own.
      const own = await cloneDatabase(testServerUrl(), testTemplateDatabase());
      const session = await openDatabase(own.url);
      const recording = new RecordingPool(own.url);
      const ownLog = new DeliveryLogRepository(recording, new DeliveryNotifier(recording));
      try {
        await session.query(`INSERT INTO accounts (id, name) VALUES ('acc_plan', 'plan')`);
        await session.query(`INSERT INTO applications (id, account_id, name) VALUES (1, 'acc_plan', 'old'), (2, 'acc_plan', 'big')`);
        for (const table of ['delivery_queue', 'deliveries', 'events', 'delivery_attempts'])
          await session.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
        // `count` deliveries of `application`, queued (paused when `paused`), ids time-ordered from `prefix`.
        const fill = (application: number, prefix: string, count: number, paused: boolean) =>
          session.query(
            `WITH e AS (
               INSERT INTO events (id, application_id, event_type, payload, created_at)
               SELECT 'evt_' || $2 || lpad(i::text, 6, '0'), $1, 'acw_start', '{}', now() - interval '1 hour'
                 FROM generate_series(1, $3::int) i RETURNING id
             ), d AS (
               INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
               SELECT 'dlv' || substr(id, 4), id, $1, 'acw_start', CASE WHEN $4 THEN 'paused' ELSE 'pending' END::delivery_status,
                      now(), now(), now()
                 FROM e RETURNING id
             )
             INSERT INTO delivery_queue (delivery_id, application_id, due_at, paused) SELECT id, $1, now(), $4 FROM d`,
            [application, prefix, count, paused],
          );
        // A busy queue's life without vacuum: 4,000 deliveries come and go (their dead rows stay),
        // an ANALYZE sees the queue empty and no application 2 in the history, then application 2
        // gets 4,000 paused deliveries, 30 of them pending and held by a worker.
        await fill(1, 'a', 4000, false);
        await session.query(`DELETE FROM delivery_queue`);
        await session.query(`UPDATE deliveries SET status = 'succeeded'`);
        await session.query(`ANALYZE delivery_queue, deliveries, delivery_attempts`);
        await fill(2, 'b', 4000, true);
        const held = (
          await session.query<{ id: string }>(`SELECT id FROM deliveries WHERE application_id = 2 ORDER BY id DESC LIMIT 30`)
        ).map((row) => row.id);
        await setDeliveryStatus(own.url, held, 'sending');
        await session.query(
          `INSERT INTO delivery_attempts (delivery_id, number, started_at, duration_ms, url, response_status)
           SELECT id, 1, now(), 5, 'http://10.0.9.1:9/hook', 503 FROM unnest($1::text[]) id`,
          [held],
        );
        const [estimate] = await session.query<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>(
          `EXPLAIN (FORMAT JSON) SELECT * FROM delivery_queue`,
        );
        expect(estimate['QUERY PLAN'][0].Plan['Plan Rows']).toBeLessThan(100);

        // What the console asks for: the first page, the next, the counts, one delivery, why each failed.
        const scope = scopeOf(2);
        const first = await ownLog.list(scope, {}, 25, null);
        expect(first.items.map((item) => item.status)).toEqual(Array(25).fill('sending'));
        const next = await ownLog.list(scope, {}, 25, first.nextCursor);
        expect(next.items.map((item) => item.status)).toEqual([...Array(5).fill('sending'), ...Array(20).fill('paused')]);
        expect((await ownLog.list(scope, { status: 'sending' }, 25, null)).items).toHaveLength(25);
        expect(await ownLog.countByStatus(scope, {})).toEqual({ paused: 3970, sending: 30 });
        expect((await ownLog.find(scope, held[0]))?.status).toBe('sending');
        expect((await ownLog.lastAttempts(scope, held.slice(0, 25))).size).toBe(25);

        // Each statement as PostgreSQL ran it: no table read more than once, and a page's rows by key.
        // Joined to the queue, the first page read 26 × 4,000 queue rows.
        const reads = [];
        for (const { text, values } of recording.statements) {
          const plan = await explainAnalyze(session, text, values);
          reads.push({
            statement: text.replace(/\s+/g, ' ').slice(0, 60),
            queue: Math.max(0, ...rowsRead(plan, 'delivery_queue')),
            history: Math.max(0, ...rowsRead(plan, 'deliveries')),
          });
        }
        const [firstPage, nextPage, sendingPage, counts, one, lastAttempts] = reads;
        expect(reads).toHaveLength(6);
        for (const page of [firstPage, nextPage, lastAttempts]) {
          expect(page.queue).toBeLessThanOrEqual(26);
          expect(page.history).toBeLessThanOrEqual(26);
        }
        expect(one).toMatchObject({ queue: 1, history: 1 });
        // The status filter and the counts read the application's deliveries once, and the queue at most once.
        for (const whole of [sendingPage, counts]) {
          expect(whole.queue).toBeLessThanOrEqual(4000);
          expect(whole.history).toBeLessThanOrEqual(8000);
        }
      } finally {
        await recording.onApplicationShutdown();
        await session.close();
        await own.drop();
      }
    });
  });
});
