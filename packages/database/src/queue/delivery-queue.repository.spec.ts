import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PgPool } from '../pg-pool';
import { cloneDatabase, TestDatabase } from '../testing/test-databases';
import { testServerUrl, testTemplateDatabase } from '../testing/config/test-server';
import { openDatabase, sql } from '../testing/sql';
import { explainAnalyze, loopsOf, PlanNode, rowsRead } from '../testing/plans';
import { shownStatus } from './queue.sql';
import { CLAIM_SQL, ClaimOptions, DeliveryQueueRepository, FINISH_SQL, NewAttemptRecord } from './delivery-queue.repository';

/**
 * The queue's statements against a cloned database, rows written in SQL so each test states the
 * queue it starts from: the claim (room per host, leases), finishing, handing back, and the
 * endpoint health the finish keeps.
 */
describe('DeliveryQueueRepository', () => {
  let db: TestDatabase;
  let pool: PgPool;
  let queue: DeliveryQueueRepository;
  let nextApplication = 1;
  let nextRow = 0;

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    pool = new PgPool({ url: db.url, poolSize: 2 });
    queue = new DeliveryQueueRepository(pool);
    await sql(db.url, `INSERT INTO accounts (id, name) VALUES ('acc_queue', 'queue tests')`);
  });
  afterAll(async () => {
    await pool.onApplicationShutdown();
    await db.drop();
  });

  /** An application whose webhook points at `host`, subscribed to acw_start; returns its id. */
  async function application(host: string): Promise<number> {
    const id = nextApplication++;
    await sql(db.url, `INSERT INTO applications (id, account_id, name) VALUES ($1, 'acc_queue', 'app')`, [id]);
    await sql(
      db.url,
      `INSERT INTO webhooks (application_id, url, destination_host, retry_enabled, retry_value, max_retries, backoff_type, backoff_value, headers)
       VALUES ($1, $2, $3, 1, 1, 3, 'fixed', 0, '{}')`,
      [id, `http://${host}:9/hook`, host],
    );
    await sql(
      db.url,
      `INSERT INTO subscriptions (application_id, event_type, ensure_delivery, active) VALUES ($1, 'acw_start', true, true)`,
      [id],
    );
    return id;
  }

  /** `count` pending deliveries of `applicationId`, due one millisecond apart in the past; their ids, oldest first. */
  async function due(applicationId: number, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      // Zero-padded, so the ids sort in the order they were made whichever test runs first.
      const n = String(nextRow++).padStart(6, '0');
      const at = new Date(Date.now() - 60_000 + Number(n));
      await sql(db.url, `INSERT INTO events (id, application_id, event_type, payload, created_at) VALUES ($1, $2, 'acw_start', '{}', $3)`, [
        `evt_${n}`,
        applicationId,
        at,
      ]);
      await sql(
        db.url,
        `INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
         VALUES ($1, $2, $3, 'acw_start', 'pending', $4, $4, $4)`,
        [`dlv_${n}`, `evt_${n}`, applicationId, at],
      );
      await sql(db.url, `INSERT INTO delivery_queue (delivery_id, application_id, due_at) VALUES ($1, $2, $3)`, [
        `dlv_${n}`,
        applicationId,
        at,
      ]);
      ids.push(`dlv_${n}`);
    }
    return ids;
  }

  /** How the statements after a claim name an unkeyed delivery. */
  const ref = (id: string) => ({ id, applicationId: 0, orderingKey: null, manualAttempt: false });

  /** A claim's options as a worker with nothing in flight makes them, leased for a minute. */
  function claimOptions(overrides: Partial<ClaimOptions> = {}): ClaimOptions {
    const now = new Date();
    return {
      limit: 50,
      token: randomUUID(),
      now,
      leaseUntil: new Date(now.getTime() + 60_000),
      hostsInFlight: new Map(),
      hostCap: 16,
      endpointCap: 16,
      ...overrides,
    };
  }

  function claim(options: Partial<ClaimOptions> = {}) {
    return queue.claim(claimOptions(options));
  }

  /** Each delivery as the API shows it, its queue row's lease and due time (null once out of the queue), and both rows' versions. */
  const rows = (ids: string[]) =>
    sql<{ id: string; status: string; lease_token: string | null; due_at: Date | null; paused: boolean | null; versions: string }>(
      db.url,
      `SELECT d.id, ${shownStatus('d')} AS status, q.lease_token, q.due_at, q.paused, d.xmin::text || '/' || coalesce(q.xmin::text, '-') AS versions
         FROM deliveries d LEFT JOIN delivery_queue q ON q.delivery_id = d.id WHERE d.id = ANY($1) ORDER BY d.id`,
      [ids],
    );

  function attempt(startedAt = new Date()): NewAttemptRecord {
    return {
      startedAt,
      durationMs: 3,
      url: 'http://127.0.0.1:9/hook',
      responseStatus: 200,
      responseExcerpt: 'ok',
      error: null,
      nextAttemptAt: null,
      requestHeaders: { 'content-type': 'application/json' },
    };
  }

  afterEach(async () => {
    // Each test starts from an empty queue; the applications stay (ids are never reused).
    await sql(db.url, 'DELETE FROM delivery_queue');
    await sql(db.url, 'DELETE FROM endpoint_claims');
    await sql(db.url, 'DELETE FROM delivery_attempts');
    await sql(db.url, 'DELETE FROM deliveries');
    await sql(db.url, 'DELETE FROM events');
  });

  describe('claim', () => {
    it('takes, per host, no more than the room the worker has left, oldest first, and leaves the rest untouched', async () => {
      const app = await application('10.0.0.1');
      const ids = await due(app, 10);
      const before = await rows(ids);

      const batch = await claim({ hostsInFlight: new Map([['10.0.0.1', 13]]) });

      expect(batch.deliveries.map((d) => d.id)).toEqual(ids.slice(0, 3));
      const after = await rows(ids);
      expect(after.slice(0, 3).map((r) => r.status)).toEqual(['sending', 'sending', 'sending']);
      // The claim writes the queue rows' lease only: the deliveries' rows are the ones published.
      expect(after.slice(0, 3).map((r) => r.versions.split('/')[0])).toEqual(before.slice(0, 3).map((r) => r.versions.split('/')[0]));
      // Not claimed and handed back: the same row versions as before the claim.
      expect(after.slice(3)).toEqual(before.slice(3));
    });

    it('skips a host with less room than minHostRoom, and takes other hosts meanwhile', async () => {
      const busy = await application('10.0.0.2');
      const idle = await application('10.0.0.3');
      const busyIds = await due(busy, 4);
      const idleIds = await due(idle, 2);

      const batch = await claim({ hostsInFlight: new Map([['10.0.0.2', 14]]), minHostRoom: 4 });

      expect(batch.deliveries.map((d) => d.id)).toEqual(idleIds);
      expect((await rows(busyIds)).map((r) => r.status)).toEqual(['pending', 'pending', 'pending', 'pending']);
    });

    it('returns each claimed delivery with its attempt context, and claims a leased one again once its lease has run out', async () => {
      const app = await application('10.0.0.4');
      const [id] = await due(app, 1);
      const first = await claim({ leaseUntil: new Date(Date.now() - 1) });
      expect(first.deliveries[0]).toMatchObject({ id, applicationId: app, eventType: 'acw_start', attemptCount: 0 });
      expect(first.deliveries[0].context).toMatchObject({
        webhook: { url: 'http://10.0.0.4:9/hook' },
        // Read from the column stored with the URL, for the host caps.
        destinationHost: '10.0.0.4',
        subscription: { active: true },
        event: { traceContext: null },
      });

      const again = await claim();
      expect(again.deliveries.map((d) => d.id)).toEqual([id]);
      // The first worker's token no longer finishes it.
      expect(await queue.finish(ref(id), 'not-the-token', { status: 'succeeded', nextAttemptAt: null, now: new Date() }, attempt())).toBe(
        false,
      );
    });
  });

  it('returns the trace context its event stored with the attempt context (PRODUCT.md §16), with its claim', async () => {
    const app = await application('10.0.0.14');
    const [id] = await due(app, 1);
    const stored = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 vendor=opaque';
    await sql(db.url, `UPDATE events SET trace_context = $1 WHERE id = (SELECT event_id FROM deliveries WHERE id = $2)`, [stored, id]);
    const claimed = await claim({ leaseUntil: new Date(Date.now() - 1) });
    expect(claimed.deliveries.find((d) => d.id === id)?.context.event.traceContext).toBe(stored);
  });

  describe('isolation between applications (PRODUCT.md §17)', () => {
    /** `count` deliveries of `applicationId` due before any made by due(): a backlog, in one statement. */
    async function backlog(applicationId: number, count: number): Promise<void> {
      const prefix = `${applicationId}_${String(nextRow++).padStart(6, '0')}`;
      await sql(
        db.url,
        `WITH e AS (
           INSERT INTO events (id, application_id, event_type, payload, created_at)
           SELECT 'evt_b' || $2 || '_' || lpad(g::text, 6, '0'), $1, 'acw_start', '{}', now() - interval '1 hour' + g * interval '1 ms'
             FROM generate_series(1, $3::int) g RETURNING id, created_at
         ), d AS (
           INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
           SELECT 'dlv_b' || substr(e.id, 6), e.id, $1, 'acw_start', 'pending', e.created_at, e.created_at, e.created_at FROM e
           RETURNING id, next_attempt_at
         )
         INSERT INTO delivery_queue (delivery_id, application_id, due_at) SELECT id, $1, next_attempt_at FROM d`,
        [applicationId, prefix, count],
      );
    }

    /** Deliveries of `applicationId` under a live lease: attempts in flight to its endpoint. */
    async function inFlight(applicationId: number): Promise<number> {
      const [{ n }] = await sql<{ n: string }>(
        db.url,
        'SELECT count(*) AS n FROM delivery_queue WHERE application_id = $1 AND lease_until >= now()',
        [applicationId],
      );
      return Number(n);
    }

    const succeeded = () => ({ status: 'succeeded' as const, nextAttemptAt: null, now: new Date() });

    it('serves every application with something due in turn, however large another one’s older backlog', async () => {
      const flooding = await application('10.1.0.1');
      const other = await application('10.1.0.2');
      await backlog(flooding, 2_000);
      const mine = await due(other, 2);

      const batch = await claim({ limit: 4 });

      // Round-robin: each application's first, then each one's second. In one global due order,
      // all four would have been the backlog's.
      expect(batch.deliveries.map((d) => d.applicationId)).toEqual([flooding, other, flooding, other]);
      expect(batch.deliveries.filter((d) => d.applicationId === other).map((d) => d.id)).toEqual(mine);
    });

    it('caps attempts in flight per endpoint across claims with other tokens (workers); a finish, a hand-back or a lease that runs out gives the room back', async () => {
      const app = await application('10.1.0.3');
      await backlog(app, 40);
      const first = await claim({ endpointCap: 10 });
      expect(first.deliveries).toHaveLength(10);
      // Another worker (another token), with room of its own to spare, gets nothing more.
      expect((await claim({ endpointCap: 10 })).deliveries).toEqual([]);

      const [a, b, c, d, e, f] = first.deliveries;
      const token = (await sql<{ lease_token: string }>(db.url, 'SELECT lease_token FROM delivery_queue WHERE delivery_id = $1', [a.id]))[0]
        .lease_token;
      for (const done of [a, b, c]) expect(await queue.finish(done, token, succeeded(), attempt())).toBe(true);
      expect((await claim({ endpointCap: 10 })).deliveries).toHaveLength(3);
      expect(await queue.release(d.id, token, new Date())).toBe(true);
      // Room for one is less than a quarter of the cap: left until there is more (no claim per delivery).
      expect((await claim({ endpointCap: 10 })).deliveries).toEqual([]);
      expect(await inFlight(app)).toBe(9);
      // A killed worker's leases run out: its slots come back with them.
      await sql(db.url, `UPDATE delivery_queue SET lease_until = now() - interval '1 second' WHERE delivery_id = ANY($1)`, [[e.id, f.id]]);
      expect(await inFlight(app)).toBe(7);
      expect((await claim({ endpointCap: 10 })).deliveries).toHaveLength(3);
      expect(await inFlight(app)).toBe(10);
      expect((await claim({ endpointCap: 10 })).deliveries).toEqual([]);
    });

    it('lets a worker hold deliveries behind its endpoint slots, and counts it the least of its slots and its live leases', async () => {
      const app = await application('10.1.0.8');
      await backlog(app, 40);
      const token = randomUUID();
      const first = await claim({ token, endpointCap: 10, holder: 'w1', deliveriesPerSlot: 3 });
      // Ten slots, three deliveries held for each: ten attempting and twenty waiting behind them.
      expect(first.endpointSlots.get(app)).toBe(10);
      expect(first.deliveries).toHaveLength(30);
      // Another worker: the first holds all ten slots.
      expect((await claim({ endpointCap: 10, holder: 'w2' })).deliveries).toEqual([]);
      // The first, holding its thirty, has no room left (three per slot, less what it holds).
      const full = await claim({ endpointCap: 10, holder: 'w1', deliveriesPerSlot: 3, heldPerApplication: new Map([[app, 30]]) });
      expect(full.deliveries).toEqual([]);

      // It finishes 24: six leases left, so it counts six (no more attempts than leases, whatever its slots).
      for (const done of first.deliveries.slice(0, 24)) expect(await queue.finish(done, token, succeeded(), attempt())).toBe(true);
      const second = await claim({ endpointCap: 10, holder: 'w2' });
      expect(second.endpointSlots.get(app)).toBe(4);
      expect(second.deliveries).toHaveLength(4);
      // The first claims again: its latest claim says its slots, six now, and holds up to 18.
      const again = await claim({ endpointCap: 10, holder: 'w1', deliveriesPerSlot: 3, heldPerApplication: new Map([[app, 6]]) });
      expect(again.endpointSlots.get(app)).toBe(6);
      expect(again.deliveries).toHaveLength(6);
      // Six and four: the cap, with twelve leases held by the first.
      expect(await inFlight(app)).toBe(16);
      await backlog(app, 10);
      expect((await claim({ endpointCap: 10, holder: 'w3' })).deliveries).toEqual([]);
    });

    it('keeps a worker’s latest claim record while its lease lasts, and deletes the older ones with nothing in flight', async () => {
      const app = await application('10.1.0.9');
      await backlog(app, 20);
      const token = randomUUID();
      const first = await claim({ token, endpointCap: 8, holder: 'w1' });
      expect(first.deliveries).toHaveLength(8);
      for (const done of first.deliveries) expect(await queue.finish(done, token, succeeded(), attempt())).toBe(true);
      // Nothing in flight: its slots count nothing, and another worker takes them all.
      const other = await claim({ endpointCap: 8, holder: 'w2' });
      expect(other.endpointSlots.get(app)).toBe(8);
      const records = () =>
        sql<{ holder: string; slots: number }>(
          db.url,
          'SELECT holder, slots[array_position(slot_applications, $1)] AS slots FROM endpoint_claims WHERE $1 = ANY (application_ids) ORDER BY holder',
          [app],
        );
      // The first worker's record stays (it says the slots that worker uses until its lease ends).
      expect(await records()).toEqual([
        { holder: 'w1', slots: 8 },
        { holder: 'w2', slots: 8 },
      ]);
      // Its lease over, the next claim deletes it (the second worker's, with its leases, stays).
      await sql(db.url, `UPDATE endpoint_claims SET lease_until = now() - interval '1 second' WHERE holder = 'w1'`);
      await claim({ endpointCap: 8, holder: 'w3' });
      expect(await records()).toEqual([{ holder: 'w2', slots: 8 }]);
    });

    it('records one row per claim, whatever the applications it serves: their deliveries, and the slots it gave per application', async () => {
      const apps = [await application('10.1.0.11'), await application('10.1.0.12'), await application('10.1.0.13')];
      for (const [i, app] of apps.entries()) await backlog(app, i === 1 ? 2 : 3);
      await sql(db.url, 'UPDATE webhooks SET max_in_flight = 2 WHERE application_id = $1', [apps[1]]);
      const token = randomUUID();
      const batch = await claim({ token, holder: token, endpointCap: 8 });
      expect(batch.deliveries).toHaveLength(3 + 2 + 3);
      const rows = await sql<{
        lease_token: string;
        application_ids: number[];
        delivery_ids: string[];
        slot_applications: number[];
        slots: number[];
      }>(db.url, 'SELECT lease_token, application_ids, delivery_ids, slot_applications, slots FROM endpoint_claims');
      expect(rows).toHaveLength(1);
      const [row] = rows;
      expect(row.lease_token).toBe(token);
      const listed = row.delivery_ids.map((id, i) => `${row.application_ids[i]}:${id}`).sort();
      expect(listed).toEqual(batch.deliveries.map((d) => `${d.applicationId}:${d.id}`).sort());
      expect(row.slot_applications).toEqual(apps);
      expect(row.slots).toEqual([8, 2, 8]);
      // Its deliveries finished and its lease over, a claim deletes it; not while another claim
      // (here, a transaction holding its row) is deleting it: that claim neither waits nor fails.
      for (const done of batch.deliveries) expect(await queue.finish(done, token, succeeded(), attempt())).toBe(true);
      await sql(db.url, "UPDATE endpoint_claims SET lease_until = now() - interval '1 second'");
      const other = new PgPool({ url: db.url, poolSize: 1 });
      try {
        await other.transaction(async (otherSql) => {
          await otherSql('SELECT lease_token FROM endpoint_claims FOR UPDATE');
          await claim({ endpointCap: 8 });
          expect(await sql(db.url, 'SELECT lease_token FROM endpoint_claims')).toEqual([{ lease_token: token }]);
        });
      } finally {
        await other.onApplicationShutdown();
      }
      await claim({ endpointCap: 8 });
      expect(await sql(db.url, 'SELECT lease_token FROM endpoint_claims')).toEqual([]);
    });

    it('reads a webhook’s own max_in_flight before the default', async () => {
      const app = await application('10.1.0.4');
      await backlog(app, 10);
      await sql(db.url, 'UPDATE webhooks SET max_in_flight = 3 WHERE application_id = $1', [app]);
      expect((await claim({ endpointCap: 16 })).deliveries).toHaveLength(3);
      expect((await claim({ endpointCap: 16 })).deliveries).toEqual([]);
      expect(await inFlight(app)).toBe(3);
    });

    it('passes over an application another claim is serving, takes the others, and says it left work locked', async () => {
      const busy = await application('10.1.0.5');
      const free = await application('10.1.0.6');
      await due(busy, 2);
      const freeIds = await due(free, 2);
      const other = new PgPool({ url: db.url, poolSize: 1 });
      try {
        await other.transaction(async (otherSql) => {
          // As another worker's claim of `busy` holds its claim lock (queue.sql.ts, tryClaimLock).
          await otherSql('SELECT pg_advisory_xact_lock(1330203, $1)', [busy]);
          const batch = await claim();
          expect(batch.deliveries.map((d) => d.id)).toEqual(freeIds);
          // That claim may have read the queue before this one: the worker must not take what
          // this one saw for done (NewDeliveries).
          expect(batch.lockedOut).toBe(true);
        });
      } finally {
        await other.onApplicationShutdown();
      }
      const after = await claim();
      expect(after.deliveries.map((d) => d.applicationId)).toEqual([busy, busy]);
      expect(after.lockedOut).toBe(false);
    });

    it('takes turns round more applications than one claim visits, and comes to rest once round', async () => {
      const apps: number[] = [];
      for (let i = 0; i < 5; i++) apps.push(await application(`10.1.1.${i}`));
      for (const app of apps) await due(app, 1);

      const seen: number[] = [];
      let walkFrom = 0;
      let claims = 0;
      for (;;) {
        const batch = await claim({ applicationsPerClaim: 2, afterApplicationId: walkFrom });
        claims++;
        seen.push(...batch.deliveries.map((d) => d.applicationId));
        walkFrom = batch.lastVisited;
        if (!batch.moreApplications) break;
      }
      expect(seen.sort((x, y) => x - y)).toEqual(apps);
      expect(claims).toBe(3);
      // All five are in flight now: a run of claims visits them again, takes nothing, and comes
      // to rest at the last application (a worker never spins on them).
      const idle: boolean[] = [];
      for (let more = true; more && idle.length < 10;) {
        const batch = await claim({ applicationsPerClaim: 2, afterApplicationId: walkFrom });
        expect(batch.deliveries).toEqual([]);
        walkFrom = batch.lastVisited;
        more = batch.moreApplications;
        idle.push(more);
      }
      expect(idle.length).toBeLessThanOrEqual(3);
      expect(idle.at(-1)).toBe(false);
    });

    it('says when the next entry it saw falls due, and deletes the records of claims with nothing left in flight', async () => {
      const app = await application('10.1.0.7');
      const [id] = await due(app, 1);
      const token = randomUUID();
      const now = new Date();
      // One worker's claims: its latest record stays while its lease lasts (it says the slots held).
      const holder = 'worker-1';
      await claim({ token, now, holder });
      expect(await sql(db.url, 'SELECT delivery_ids FROM endpoint_claims WHERE $1 = ANY (application_ids)', [app])).toEqual([
        { delivery_ids: [id] },
      ]);
      const retryAt = new Date(Date.now() + 5_000);
      expect(
        await queue.finish(
          { id, applicationId: app, orderingKey: null, manualAttempt: false },
          token,
          { status: 'pending', nextAttemptAt: retryAt, now },
          attempt(),
        ),
      ).toBe(true);
      const later = await due(app, 1);
      const batch = await claim({ holder });
      expect(batch.deliveries.map((d) => d.id)).toEqual(later);
      // The first claim's lease is over (rescheduled): its record is gone, the new one's is there.
      expect(await sql(db.url, 'SELECT delivery_ids FROM endpoint_claims WHERE $1 = ANY (application_ids)', [app])).toEqual([
        { delivery_ids: later },
      ]);
      expect(await claim()).toMatchObject({ deliveries: [], nextClaimableAt: retryAt });
    });
  });

  describe('the claim’s plan', () => {
    /**
     * A database of its own (the tables must hold only what the test puts there): application 1,
     * its webhook, and autovacuum off on the tables whose statistics the test builds, so no
     * ANALYZE runs but the test's own.
     */
    async function planDatabase(): Promise<TestDatabase> {
      const own = await cloneDatabase(testServerUrl(), testTemplateDatabase());
      await sql(own.url, `INSERT INTO accounts (id, name) VALUES ('acc_plan', 'plan')`);
      await sql(own.url, `INSERT INTO applications (id, account_id, name) VALUES (1, 'acc_plan', 'app')`);
      await sql(
        own.url,
        `INSERT INTO webhooks (application_id, url, destination_host, retry_enabled, retry_value, max_retries, backoff_type, backoff_value, headers)
         VALUES (1, 'http://10.0.9.1:9/hook', '10.0.9.1', 1, 1, 3, 'fixed', 0, '{}')`,
      );
      for (const table of ['delivery_queue', 'deliveries', 'events'])
        await sql(own.url, `ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
      return own;
    }

    /** FINISH_SQL's parameters for deliveries `ids` leased with `token`: each attempt a success. */
    function finishParams(ids: string[], token: string): unknown[] {
      const each = <T>(value: T) => ids.map(() => value);
      const now = new Date();
      return [
        ids,
        each(token),
        each('succeeded'),
        each(null),
        each(now),
        each(now),
        each(12),
        each('http://10.0.9.1:9/hook'),
        each(200),
        each('ok'),
        each(null),
        each('{}'),
        each(null),
        each(null),
        each(false),
      ];
    }

    it('reaches the queue rows it leases and finishes by key while PostgreSQL believes the queue nearly empty', async () => {
      const own = await planDatabase();
      const session = await openDatabase(own.url);
      try {
        // 4,000 deliveries queued; with `keys`, in three ordering keys, each blocked behind its first.
        const fill = (prefix: string, keys = false) =>
          session.query(
            `WITH e AS (
               INSERT INTO events (id, application_id, event_type, payload, created_at)
               SELECT 'evt_' || $1 || lpad(i::text, 6, '0'), 1, 'acw_start', '{}', now() - interval '1 minute'
                 FROM generate_series(1, 4000) i RETURNING id
             ), d AS (
               INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
               SELECT 'dlv' || substr(id, 4), id, 1, 'acw_start', 'pending', now(), now(), now() FROM e RETURNING id
             )
             INSERT INTO delivery_queue (delivery_id, application_id, due_at, ordering_key, sequence, blocked)
             SELECT id, 1, now() - interval '1 minute',
                    CASE WHEN $2 THEN 'key-' || (n % 3) END, CASE WHEN $2 THEN n END, $2 AND n > 3
               FROM (SELECT id, substr(id, 6)::int AS n FROM d) numbered`,
            [prefix, keys],
          );
        // A busy queue's life without vacuum: 4,000 rows come and go (their dead rows stay), an
        // ANALYZE sees it empty, and 4,000 more arrive (and 4,000 keyed ones, further down).
        // PostgreSQL now believes it holds a row or two.
        await fill('a');
        await session.query(`DELETE FROM delivery_queue`);
        await session.query(`ANALYZE delivery_queue`);
        await fill('b');
        const [estimate] = await session.query<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>(
          `EXPLAIN (FORMAT JSON) SELECT * FROM delivery_queue`,
        );
        expect(estimate['QUERY PLAN'][0].Plan['Plan Rows']).toBeLessThan(100);

        const queueReads = (plan: PlanNode) => rowsRead(plan, 'delivery_queue');
        const explain = (statement: string, params: unknown[] = []) => explainAnalyze(session, statement, params);

        // The claim of 50: the walk and the picks read the due index, the leases are taken by key.
        await session.query(`PREPARE own_claim AS ${CLAIM_SQL}`);
        const claimPlan = await explain(
          `EXECUTE own_claim(now(), '{}', 50, 'plan', now() + interval '1 minute', 64, '{}', '{}', 1000, 0, 128, 'plan', '{}', '{}', 1, '{}', 1)`,
        );
        expect(Math.max(...queueReads(claimPlan))).toBeLessThanOrEqual(100);

        // The finish of three leased rows reads three queue rows, not the queue.
        const leased = ['dlv_b000010', 'dlv_b000020', 'dlv_b000030'];
        await session.query(
          `UPDATE delivery_queue SET lease_token = 'plan', lease_until = now() + interval '1 minute' WHERE delivery_id = ANY($1)`,
          [leased],
        );
        const finishOf = (ids: string[]) => explain(FINISH_SQL, finishParams(ids, 'plan'));
        expect(Math.max(...queueReads(await finishOf(leased)))).toBeLessThanOrEqual(leased.length);

        // Three keys' heads finished: each key's next is found by its ordering index and unblocked
        // by key, not by a read of the queue per key.
        await fill('c', true);
        const heads = ['dlv_c000001', 'dlv_c000002', 'dlv_c000003'];
        await session.query(
          `UPDATE delivery_queue SET lease_token = 'plan', lease_until = now() + interval '1 minute' WHERE delivery_id = ANY($1)`,
          [heads],
        );
        expect(Math.max(...queueReads(await finishOf(heads)))).toBeLessThanOrEqual(2 * heads.length);
      } finally {
        await session.close();
        await own.drop();
      }
    });

    it("probes each of the claiming worker's own claim records once, not once per application each lists, and reads no CTE per row", async () => {
      const own = await planDatabase();
      const session = await openDatabase(own.url);
      try {
        // Twenty applications, one delivery due in each, and ten earlier claims of this worker
        // ('w1'), each still holding a delivery of every application: single publishes' shape.
        const applications = 20;
        const earlierClaims = 10;
        await session.query(
          `INSERT INTO applications (id, account_id, name) SELECT a, 'acc_plan', 'app ' || a FROM generate_series(2, $1::int) a`,
          [applications],
        );
        await session.query(
          `WITH e AS (
             INSERT INTO events (id, application_id, event_type, payload, created_at)
             SELECT 'evt_' || c || '_' || a, a, 'acw_start', '{}', now() FROM generate_series(0, $2::int) c, generate_series(1, $1::int) a
             RETURNING id, application_id
           ), d AS (
             INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
             SELECT 'dlv' || substr(id, 4), id, application_id, 'acw_start', 'pending', now(), now(), now() FROM e RETURNING id, application_id
           )
           -- Claim 0's are due; claims 1…n's are leased under their claim's token.
           INSERT INTO delivery_queue (delivery_id, application_id, due_at, lease_token, lease_until)
           SELECT id, application_id, now() - interval '1 second',
                  CASE WHEN split_part(id, '_', 2) <> '0' THEN 'claim-' || split_part(id, '_', 2) END,
                  CASE WHEN split_part(id, '_', 2) <> '0' THEN now() + interval '1 minute' END
             FROM d`,
          [applications, earlierClaims],
        );
        await session.query(
          `INSERT INTO endpoint_claims (lease_token, holder, lease_until, application_ids, delivery_ids, slot_applications, slots)
           SELECT 'claim-' || c, 'w1', now() + interval '1 minute' + c * interval '1 second',
                  array_agg(a ORDER BY a), array_agg('dlv_' || c || '_' || a ORDER BY a), array_agg(a ORDER BY a), array_agg(16 ORDER BY a)
             FROM generate_series(1, $2::int) c, generate_series(1, $1::int) a GROUP BY c`,
          [applications, earlierClaims],
        );
        await session.query('ANALYZE');

        await session.query(`PREPARE own_claim AS ${CLAIM_SQL}`);
        const plan = await explainAnalyze(
          session,
          `EXECUTE own_claim(now(), '{}', 100, 'claim-new', now() + interval '1 minute', 64, '{}', '{}', 1000, 0, 128, 'w1', '{}', '{}', 1, '{}', 1)`,
        );
        // Each node reading the queue runs at most once per application (the walk, the picks)
        // or per record; counted per record and application, the records' probes ran 200 times.
        const queueLoops = loopsOf(plan, (node) => node['Relation Name'] === 'delivery_queue' && node['Node Type'] !== 'ModifyTable');
        expect(Math.max(...queueLoops)).toBeLessThanOrEqual(applications + 1);
        // No CTE is read once per row of another (a CTE has no index: n × m rows): the lease by
        // ids, the slots from arrays built once, what took all its room from the picks' own count.
        const cteLoops = loopsOf(plan, (node) => node['Node Type'] === 'CTE Scan');
        expect(Math.max(...cteLoops)).toBe(1);
        // And it claimed every application's due delivery (a row each).
        expect(plan['Actual Rows']).toBe(applications);
      } finally {
        await session.close();
        await own.drop();
      }
    });

    it("has the finish's generic plan, made on empty tables, replaced once the queue's statistics are refreshed", async () => {
      const own = await planDatabase();
      const session = new pg.Client({ connectionString: own.url });
      await session.connect();
      const ownPool = new PgPool({ url: own.url, poolSize: 1 });
      try {
        await session.query(`ANALYZE delivery_queue, deliveries, events`);
        // The repository prepares its finish under a name: PostgreSQL may keep a generic plan of it.
        const repository = new DeliveryQueueRepository(ownPool);
        await repository.finish(ref('dlv_none'), 'plan', { status: 'succeeded', nextAttemptAt: null, now: new Date() }, attempt());
        expect(await ownPool.sql(`SELECT name FROM pg_prepared_statements WHERE name = 'finish'`)).toEqual([{ name: 'finish' }]);
        // That plan, kept generic from the first run here, on empty tables.
        await session.query('SET plan_cache_mode = force_generic_plan');
        const leased = ['dlv_000010', 'dlv_000020', 'dlv_000030'];
        const params = (ids: string[]) => finishParams(ids, 'plan');
        await session.query({ name: 'finish', text: FINISH_SQL, values: params(['dlv_none', 'dlv_none', 'dlv_none']) });
        // 4,000 queued, none of it analyzed.
        await session.query(
          `WITH e AS (
             INSERT INTO events (id, application_id, event_type, payload, created_at)
             SELECT 'evt_' || lpad(i::text, 6, '0'), 1, 'acw_start', '{}', now() FROM generate_series(1, 4000) i RETURNING id
           ), d AS (
             INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
             SELECT 'dlv' || substr(id, 4), id, 1, 'acw_start', 'pending', now(), now(), now() FROM e RETURNING id
           )
           INSERT INTO delivery_queue (delivery_id, application_id, due_at, lease_token, lease_until)
           SELECT id, 1, now(), 'plan', now() + interval '1 minute' FROM d`,
        );
        /** Sequential scans of the queue and the history in one finish of the three leased rows (rolled back). */
        const scansOfOneFinish = async () => {
          // The backend's counts so far (PostgreSQL 15 sends them on when idle), before and after.
          const counts = async () => {
            const [row] = (
              await session.query<{ queue: string; history: string }>(
                `SELECT pg_stat_get_xact_numscans('delivery_queue'::regclass)::text AS queue,
                        pg_stat_get_xact_numscans('deliveries'::regclass)::text AS history`,
              )
            ).rows;
            return { queue: Number(row.queue), history: Number(row.history) };
          };
          await session.query('BEGIN');
          try {
            const start = await counts();
            const { rows } = await session.query({ name: 'finish', text: FINISH_SQL, values: params(leased) });
            expect(rows).toHaveLength(3);
            const end = await counts();
            return { queue: end.queue - start.queue, history: end.history - start.history };
          } finally {
            await session.query('ROLLBACK');
          }
        };
        // The plan made on empty tables reads them whole.
        const before = await scansOfOneFinish();
        expect(before.queue + before.history).toBeGreaterThan(0);
        // The worker's refresh of the queue's statistics, from another session, replaces it.
        await repository.refreshPlannerStatistics(['delivery_queue']);
        expect(await scansOfOneFinish()).toEqual({ queue: 0, history: 0 });
      } finally {
        await session.end();
        await ownPool.onApplicationShutdown();
        await own.drop();
      }
    });

    it('reads the history once per claim, even in a generic plan cached while the tables were small', async () => {
      // Its own database: the tables must start nearly empty, whatever the other tests left.
      const small = await cloneDatabase(testServerUrl(), testTemplateDatabase());
      const session = await openDatabase(small.url);
      try {
        await session.query(`INSERT INTO accounts (id, name) VALUES ('acc_plan', 'plan')`);
        for (let app = 1; app <= 5; app++) {
          await session.query(`INSERT INTO applications (id, account_id, name) VALUES ($1, 'acc_plan', 'app')`, [app]);
          await session.query(
            `INSERT INTO webhooks (application_id, url, destination_host, retry_enabled, retry_value, max_retries, backoff_type, backoff_value, headers)
             VALUES ($1, 'http://10.0.9.1:9/hook', '10.0.9.1', 1, 1, 3, 'fixed', 0, '{}')`,
            [app],
          );
        }
        const addDeliveries = (from: number, count: number, queued: boolean) =>
          session.query(
            `WITH e AS (
               INSERT INTO events (id, application_id, event_type, payload, created_at)
               SELECT 'evt_p' || lpad(i::text, 7, '0'), 1 + i % 5, 'acw_start', '{}', now() - interval '1 minute'
                 FROM generate_series($1::int, $1::int + $2::int - 1) i RETURNING id, application_id
             ), d AS (
               INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
               SELECT 'dlv' || substr(id, 4), id, application_id, 'acw_start', 'pending', now(), now(), now() FROM e RETURNING id, application_id
             )
             INSERT INTO delivery_queue (delivery_id, application_id, due_at)
             SELECT id, application_id, now() - interval '1 minute' FROM d WHERE $3`,
            [from, count, queued],
          );
        await addDeliveries(0, 200, true);
        await session.query('ANALYZE');
        await session.query(`SET plan_cache_mode = force_generic_plan`);
        await session.query(`PREPARE small_claim AS ${CLAIM_SQL}`);
        const execute = (token: string) =>
          `EXECUTE small_claim(now(), '{}', 50, '${token}', now() + interval '1 minute', 64, '{}', '{}', 1000, 0, 128, '${token}', '{}', '{}', 1, '{}', 1)`;
        // The generic plan is made here, for 20 deliveries, and kept: nothing invalidates it.
        await session.query(execute('first'));
        await session.query(`UPDATE delivery_queue SET lease_token = NULL, lease_until = NULL`);
        // The history grows (no ANALYZE): 20,000 finished deliveries.
        await addDeliveries(200, 20_000, false);
        const plan = (await session.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${execute('second')}`)).map(
          (row) => row['QUERY PLAN'],
        );
        expect(plan.join('\n')).toContain('rows=50 ');
        // The history is read by key (a probe per lease), or by a scan cached for a small table,
        // but never by a scan run again for every lease or claimed row: that cost 70 ms a claim.
        const reads = plan.filter((line) => / on (deliveries|events) /.test(line));
        expect(reads.length).toBeGreaterThanOrEqual(2);
        for (const line of reads.filter((read) => /Seq Scan/.test(read))) expect(line).toMatch(/loops=1\)/);
      } finally {
        await session.close();
        await small.drop();
      }
    });

    it('refreshPlannerStatistics analyzes the tables the claim reads, so a plan made for an empty queue is made again', async () => {
      const counts = () =>
        sql<{ relname: string; analyzed: string }>(
          db.url,
          `SELECT relname, analyze_count::text AS analyzed FROM pg_stat_user_tables
            WHERE relname IN ('delivery_queue', 'deliveries', 'events') ORDER BY relname`,
        );
      // The statistics collector reports what a backend did when it goes idle: polled for, up to 5 s.
      const countsOnce = async (counted: (now: Awaited<ReturnType<typeof counts>>) => boolean) => {
        let now = await counts();
        for (let tries = 0; tries < 50 && !counted(now); tries++) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          now = await counts();
        }
        return now;
      };
      const before = await counts();
      await queue.refreshPlannerStatistics();
      const after = await countsOnce((now) => now.every((row, i) => row.analyzed !== before[i].analyzed));
      expect(after.map((row, i) => [row.relname, Number(row.analyzed) - Number(before[i].analyzed)])).toEqual([
        ['deliveries', 1],
        ['delivery_queue', 1],
        ['events', 1],
      ]);
      // Analyzed just now: a refresh that accepts a recent one analyzes nothing.
      expect(await queue.refreshPlannerStatistics(undefined, { unlessWithinMs: 60_000 })).toEqual({ analyzed: [], notices: [] });
      // The queue's alone, as the worker's growth marks ask (PlannerStatisticsPolicy).
      const queueBefore = await counts();
      expect(await queue.refreshPlannerStatistics(['delivery_queue'])).toEqual({ analyzed: ['delivery_queue'], notices: [] });
      const queueAfter = await countsOnce((now) => now[1].analyzed !== queueBefore[1].analyzed);
      expect(queueAfter.map((row, i) => [row.relname, Number(row.analyzed) - Number(queueBefore[i].analyzed)])).toEqual([
        ['deliveries', 0],
        ['delivery_queue', 1],
        ['events', 0],
      ]);
    });
  });

  describe('finish and hand-back', () => {
    it('records the attempt and the outcome under the lease token, and nothing without it', async () => {
      const app = await application('10.0.0.5');
      const [id] = await due(app, 1);
      const token = randomUUID();
      await claim({ token });

      expect(await queue.finish(ref(id), randomUUID(), { status: 'succeeded', nextAttemptAt: null, now: new Date() }, attempt())).toBe(
        false,
      );
      expect(await queue.finish(ref(id), token, { status: 'succeeded', nextAttemptAt: null, now: new Date() }, attempt())).toBe(true);

      const [row] = await rows([id]);
      // Done: out of the queue.
      expect(row).toMatchObject({ status: 'succeeded', lease_token: null, due_at: null });
      const attempts = await sql(db.url, 'SELECT number, response_status FROM delivery_attempts WHERE delivery_id = $1', [id]);
      expect(attempts).toEqual([{ number: 1, response_status: 200 }]);
    });

    it('hands a claimed delivery back due at the given time, cancels one, and pauses one, each only under its token', async () => {
      const app = await application('10.0.0.6');
      const [released, cancelled, paused] = await due(app, 3);
      const token = randomUUID();
      await claim({ token });
      const dueAt = new Date(Date.now() + 5_000);

      expect(await queue.release(released, 'wrong', dueAt)).toBe(false);
      expect(await queue.release(released, token, dueAt)).toBe(true);
      expect(await queue.cancelClaimed(ref(cancelled), token, new Date())).toBe(true);
      expect(await queue.pauseClaimed(paused, token, new Date())).toBe(true);

      expect((await rows([released, cancelled, paused])).map((r) => [r.status, r.lease_token, r.paused])).toEqual([
        ['pending', null, false],
        ['cancelled', null, null],
        ['paused', null, true],
      ]);
      expect((await rows([released]))[0].due_at?.getTime()).toBe(dueAt.getTime());
      // Scheduled later, so not claimable now; the claim says when it will be.
      const later = await claim();
      expect(later.deliveries).toEqual([]);
      expect(later.nextClaimableAt?.getTime()).toBe(dueAt.getTime());
    });

    it('records two applications’ finishes side by side: one held back does not hold the other’s lane', async () => {
      // Consecutive ids: one in each of the finisher's two lanes.
      const [first, second] = [await application('10.0.0.7'), await application('10.0.0.8')];
      const [held] = await due(first, 1);
      const [free] = await due(second, 1);
      const token = randomUUID();
      expect((await claim({ token })).deliveries).toHaveLength(2);
      const done = () => ({ status: 'succeeded' as const, nextAttemptAt: null, now: new Date() });
      const lock = await openDatabase(db.url);
      try {
        await lock.query('BEGIN');
        await lock.query('SELECT 1 FROM delivery_queue WHERE delivery_id = $1 FOR UPDATE', [held]);
        let heldRecorded = false;
        const heldFinish = queue.finish({ ...ref(held), applicationId: first }, token, done(), attempt()).then((recorded) => {
          heldRecorded = recorded;
          return recorded;
        });
        // The other lane's statement commits while the first waits on the lock.
        expect(await queue.finish({ ...ref(free), applicationId: second }, token, done(), attempt())).toBe(true);
        expect(heldRecorded).toBe(false);
        expect((await rows([held, free])).map((r) => r.status)).toEqual(
          [held, free].sort().map((id) => (id === held ? 'sending' : 'succeeded')),
        );
        await lock.query('ROLLBACK');
        expect(await heldFinish).toBe(true);
      } finally {
        await lock.close();
      }
    });
  });

  describe('webhook configurations kept by version (issue 21, item 3)', () => {
    /** The webhook and secrets a claim of one new delivery of `applicationId` hands its attempt; the delivery is then finished. */
    const claimedWebhook = async (applicationId: number) => {
      await due(applicationId, 1);
      const options = claimOptions();
      const [delivery] = (await queue.claim(options)).deliveries;
      await queue.finish(delivery, options.token, { status: 'succeeded', nextAttemptAt: null, now: new Date() }, attempt());
      return { webhook: delivery.context.webhook, secrets: delivery.context.secrets };
    };
    const renumber = (applicationId: number) =>
      sql(db.url, `UPDATE webhooks SET config_version = nextval('webhooks_config_version_seq') WHERE application_id = $1`, [applicationId]);

    it('reads a configuration once per version: a change is seen from its new version on', async () => {
      const app = await application('10.0.7.1');
      expect((await claimedWebhook(app)).webhook?.url).toBe('http://10.0.7.1:9/hook');

      // Written without a new version (no statement of Herald's does this): the kept one still serves.
      await sql(db.url, `UPDATE webhooks SET url = 'http://10.0.7.1:9/unseen' WHERE application_id = $1`, [app]);
      expect((await claimedWebhook(app)).webhook?.url).toBe('http://10.0.7.1:9/hook');

      await sql(db.url, `INSERT INTO webhook_secrets (id, application_id, secret) VALUES ($1, $2, 'whsec_new')`, [`sec_${app}`, app]);
      await renumber(app);
      expect(await claimedWebhook(app)).toEqual({
        webhook: expect.objectContaining({ url: 'http://10.0.7.1:9/unseen' }),
        secrets: ['whsec_new'],
      });
    });

    it('never serves a removed webhook’s configuration to the one configured after it', async () => {
      const app = await application('10.0.7.2');
      expect((await claimedWebhook(app)).webhook?.url).toBe('http://10.0.7.2:9/hook');
      await sql(db.url, 'DELETE FROM webhooks WHERE application_id = $1', [app]);
      expect((await claimedWebhook(app)).webhook).toBeNull();
      await sql(
        db.url,
        `INSERT INTO webhooks (application_id, url, destination_host, retry_enabled, retry_value, max_retries, backoff_type, backoff_value, headers)
         VALUES ($1, 'http://10.0.7.2:9/again', '10.0.7.2', 1, 1, 3, 'fixed', 0, '{"X-Again": "1"}')`,
        [app],
      );
      expect((await claimedWebhook(app)).webhook).toEqual(
        expect.objectContaining({ url: 'http://10.0.7.2:9/again', headers: { 'X-Again': '1' } }),
      );
    });
  });

  describe('claims riding on finishes', () => {
    const done = () => ({ status: 'succeeded' as const, nextAttemptAt: null, now: new Date() });
    /** The transaction that last wrote each row: the delivery's row, or its queue row while it has one. */
    const writtenBy = async (ids: string[]) =>
      (await rows(ids)).map((r) => (r.due_at === null ? r.versions.split('/')[0] : r.versions.split('/')[1]));

    it('fills the room the finish ends, in that finish’s transaction', async () => {
      const app = await application('10.0.1.1');
      const [first, second, third, fourth] = await due(app, 4);
      const token = randomUUID();
      // An endpoint cap of 2: both leases taken, nothing more to claim until one ends.
      expect((await claim({ token, endpointCap: 2 })).deliveries.map((d) => d.id)).toEqual([first, second]);
      expect((await claim({ endpointCap: 2 })).deliveries).toEqual([]);

      // The first finish is in flight; the second waits for the lane's next statement, and the claim rides on it.
      const finishes = [first, second].map((id) => queue.finish({ ...ref(id), applicationId: app }, token, done(), attempt()));
      const claimed = await queue.claimAfterFinishing(app, () => claimOptions({ endpointCap: 2 })).claimed;
      expect(await Promise.all(finishes)).toEqual([true, true]);

      expect(claimed!.deliveries.map((d) => d.id)).toEqual([third, fourth]);
      const [firstBy, secondBy, thirdBy, fourthBy] = await writtenBy([first, second, third, fourth]);
      // One transaction: the second's finish and both leases; the first's finish committed before it.
      expect(thirdBy).toBe(secondBy);
      expect(fourthBy).toBe(secondBy);
      expect(firstBy).not.toBe(secondBy);
    });

    it('claims alone when no finish waits, and not at all when the worker has no slots by then', async () => {
      const app = await application('10.0.1.2');
      const [only] = await due(app, 1);
      expect(await queue.claimAfterFinishing(app, () => null).claimed).toBeNull();
      expect((await rows([only]))[0].lease_token).toBeNull();

      const claimed = await queue.claimAfterFinishing(app, () => claimOptions({ endpointCap: 2 })).claimed;
      expect(claimed!.deliveries.map((d) => d.id)).toEqual([only]);

      // One waiting for a finish that never comes is called off untaken.
      const [later] = await due(app, 1);
      const waiting = queue.claimAfterFinishing(app, () => claimOptions({ endpointCap: 2 }), { withNextFinish: true });
      expect(waiting.withdraw()).toBe(true);
      expect(await waiting.claimed).toBeNull();
      expect((await rows([later]))[0].lease_token).toBeNull();
    });

    it('records the finish on its own when the claim riding on it fails in PostgreSQL, after the finish ran', async () => {
      const app = await application('10.0.1.3');
      const [first, second] = await due(app, 2);
      const token = randomUUID();
      await claim({ token });
      const finishes = [first, second].map((id) => queue.finish({ ...ref(id), applicationId: app }, token, done(), attempt()));
      // A negative LIMIT: PostgreSQL refuses the claim after the finish statement ran in the
      // transaction, which rolls both back.
      const failing = queue.claimAfterFinishing(app, () => claimOptions({ limit: -1 })).claimed;

      await expect(failing).rejects.toThrow(/LIMIT must not be negative/);
      expect(await Promise.all(finishes)).toEqual([true, true]);
      expect((await rows([first, second])).map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    });
  });

  describe('retries and the backlog', () => {
    it('puts a delivery with a retry to come back in the queue at its next attempt, and counts the queue by state', async () => {
      const app = await application('10.0.0.8');
      const [retried, held, waiting] = await due(app, 3);
      const token = randomUUID();
      const now = new Date();
      await claim({ token, limit: 2 });
      const nextAttemptAt = new Date(now.getTime() + 30_000);

      expect(
        await queue.finish(ref(retried), token, { status: 'pending', nextAttemptAt, now }, { ...attempt(), responseStatus: 500 }),
      ).toBe(true);

      const [row] = await rows([retried]);
      expect(row).toMatchObject({ status: 'pending', lease_token: null, paused: false });
      expect(row.due_at?.getTime()).toBe(nextAttemptAt.getTime());
      const [delivery] = await sql(db.url, 'SELECT attempt_count, next_attempt_at FROM deliveries WHERE id = $1', [retried]);
      expect(delivery).toEqual({ attempt_count: 1, next_attempt_at: nextAttemptAt });
      expect(await queue.backlog(new Date())).toMatchObject({ due: 1, scheduled: 1, sending: 1, paused: 0 });
      expect([held, waiting]).toHaveLength(2);
    });
  });

  describe('endpoint health, kept by the finish', () => {
    const health = (app: number) =>
      sql<{ xmin: string; consecutive_failures: number; failing_since: Date | null; last_success_at: Date | null }>(
        db.url,
        'SELECT xmin::text, consecutive_failures, failing_since, last_success_at FROM webhooks WHERE application_id = $1',
        [app],
      ).then(([row]) => row);

    async function finishOne(app: number, status: 'succeeded' | 'pending', startedAt: Date): Promise<void> {
      const [id] = await due(app, 1);
      const token = randomUUID();
      await claim({ token });
      const outcome = { status, nextAttemptAt: status === 'pending' ? new Date(Date.now() + 60_000) : null, now: new Date() };
      expect(await queue.finish(ref(id), token, outcome, attempt(startedAt))).toBe(true);
    }

    it('starts and grows a failure streak, ends it on a success, and leaves the row alone while nothing changes', async () => {
      const app = await application('10.0.0.7');
      const t0 = new Date(Date.now() - 10_000);

      await finishOne(app, 'pending', t0);
      expect(await health(app)).toMatchObject({ consecutive_failures: 1, failing_since: t0, last_success_at: null });
      await finishOne(app, 'pending', new Date(t0.getTime() + 1_000));
      expect(await health(app)).toMatchObject({ consecutive_failures: 2, failing_since: t0 });

      const succeededAt = new Date(t0.getTime() + 2_000);
      await finishOne(app, 'succeeded', succeededAt);
      const healthy = await health(app);
      expect(healthy).toMatchObject({ consecutive_failures: 0, failing_since: null, last_success_at: succeededAt });

      // Another success within the second: no new row version.
      await finishOne(app, 'succeeded', new Date(succeededAt.getTime() + 400));
      expect(await health(app)).toEqual(healthy);

      // A second or more later, the last success moves on.
      const later = new Date(succeededAt.getTime() + 1_500);
      await finishOne(app, 'succeeded', later);
      expect(await health(app)).toMatchObject({ consecutive_failures: 0, last_success_at: later });
    });
  });
});
