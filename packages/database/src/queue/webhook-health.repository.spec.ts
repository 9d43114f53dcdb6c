import type { DeliveryStatus } from '@herald/core';
import { DeliveryNotifier } from '../notifications/delivery-notifier';
import { PgPool } from '../pg-pool';
import { ApplicationScope } from '../records';
import { setDeliveryStatus } from '../testing/delivery-state';
import { cloneDatabase, TestDatabase } from '../testing/test-databases';
import { testServerUrl, testTemplateDatabase } from '../testing/config/test-server';
import { sql } from '../testing/sql';
import { testAudit } from '../testing/audit';
import { DeliveryQueueRepository } from './delivery-queue.repository';
import { shownStatus } from './queue.sql';
import { HEALTH_BATCH_SIZE, WebhookHealthRepository } from './webhook-health.repository';

const HOUR = 60 * 60 * 1000;

/**
 * Endpoint health's statements against a cloned database, rows written in SQL so each test states
 * the webhook and queue it starts from: disabling pauses what waits in the queue (both the queue
 * row and the delivery) and leaves what a worker holds to it, enabling resumes, auto-disable's
 * thresholds, and the notices queued for the operational webhook only when there is one. Each
 * test has applications of its own and says whether an operational webhook is configured.
 */
describe('WebhookHealthRepository', () => {
  let db: TestDatabase;
  let pool: PgPool;
  let health: WebhookHealthRepository;
  let nextApplication = 1;
  let nextRow = 0;

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    pool = new PgPool({ url: db.url, poolSize: 2 });
    health = new WebhookHealthRepository(pool, new DeliveryNotifier(pool));
    await sql(db.url, `INSERT INTO accounts (id, name) VALUES ('acc_health', 'health tests')`);
  });
  afterAll(async () => {
    await pool.onApplicationShutdown();
    await db.drop();
  });
  // The operational webhook is one row for the whole database: no test inherits another's.
  beforeEach(() => sql(db.url, 'DELETE FROM operational_webhook'));

  const scopeOf = (applicationId: number) => ({ applicationId, accountId: 'acc_health' }) as ApplicationScope;
  const noticeIds = () => {
    const n = nextRow++;
    return { eventId: `evt_notice_${n}`, deliveryId: `dlv_notice_${n}` };
  };
  const configureOperationalWebhook = () =>
    sql(
      db.url,
      `INSERT INTO operational_webhook (id, url, destination_host, headers, secret) VALUES (1, 'http://10.9.9.9:9/ops', '10.9.9.9', '{}', 'ops-secret')`,
    );

  /** An application whose webhook is active with no failures unless `options` say otherwise (no webhook with `webhook: false`); its id. */
  async function application(
    options: { webhook?: boolean; state?: 'active' | 'disabled'; failingSince?: Date | null; consecutiveFailures?: number } = {},
  ): Promise<number> {
    const id = nextApplication++;
    await sql(db.url, `INSERT INTO applications (id, account_id, name) VALUES ($1, 'acc_health', 'app')`, [id]);
    if (options.webhook === false) return id;
    const disabled = options.state === 'disabled';
    await sql(
      db.url,
      `INSERT INTO webhooks (application_id, url, destination_host, retry_enabled, retry_value, max_retries, backoff_type, backoff_value, headers,
                             state, disabled_at, disabled_reason, failing_since, consecutive_failures)
       VALUES ($1, 'http://10.0.0.1:9/hook', '10.0.0.1', 1, 1, 3, 'fixed', 0, '{}', $2, $3, $4, $5, $6)`,
      [
        id,
        options.state ?? 'active',
        disabled ? new Date(Date.now() - HOUR) : null,
        disabled ? 'manual' : null,
        options.failingSince ?? null,
        options.consecutiveFailures ?? 0,
      ],
    );
    return id;
  }

  /**
   * `count` deliveries of `applicationId`, each of its own event, made at `createdAt` and left in
   * `status` with both tables as Herald keeps them; their ids, oldest first.
   */
  async function deliveries(
    applicationId: number,
    status: DeliveryStatus,
    count = 1,
    options: { createdAt?: Date; destination?: 'webhook' | 'operational'; attemptCount?: number } = {},
  ): Promise<string[]> {
    const ns = Array.from({ length: count }, () => String(nextRow++).padStart(6, '0'));
    const ids = ns.map((n) => `dlv_${n}`);
    const operational = options.destination === 'operational';
    await sql(
      db.url,
      `WITH made AS (
         SELECT * FROM unnest($1::text[], $2::text[]) AS m(event_id, delivery_id)
       ), e AS (
         INSERT INTO events (id, application_id, event_type, payload, created_at) SELECT event_id, $3, $4, '{}', $5 FROM made
       ), d AS (
         INSERT INTO deliveries (id, event_id, application_id, event_type, status, destination, attempt_count, next_attempt_at, created_at, updated_at)
         SELECT delivery_id, event_id, $3, $4, 'pending', $6, $7, $5, $5, $5 FROM made
         RETURNING id, application_id, destination, created_at
       )
       INSERT INTO delivery_queue (delivery_id, application_id, destination, due_at) SELECT id, application_id, destination, created_at FROM d`,
      [
        ns.map((n) => `evt_${n}`),
        ids,
        applicationId,
        operational ? 'delivery.exhausted' : 'acw_start',
        options.createdAt ?? new Date(Date.now() - 60_000),
        operational ? 'operational' : 'webhook',
        options.attemptCount ?? 0,
      ],
    );
    if (status !== 'pending') await setDeliveryStatus(db.url, ids, status);
    return ids;
  }

  /** Each delivery as the API shows it, with its queue row (null columns once out of the queue). */
  const rows = (ids: string[]) =>
    sql<{
      id: string;
      status: string;
      paused: boolean | null;
      due_at: Date | null;
      next_attempt_at: Date | null;
      updated_at: Date;
      attempt_count: number;
      created_at: Date;
    }>(
      db.url,
      `SELECT d.id, ${shownStatus('d')} AS status, q.paused, q.due_at, d.next_attempt_at, d.updated_at, d.attempt_count, d.created_at
         FROM deliveries d LEFT JOIN delivery_queue q ON q.delivery_id = d.id WHERE d.id = ANY($1) ORDER BY d.id`,
      [ids],
    );

  /** The notices queued about `applicationId` of `type`, with their delivery and queue row. */
  const notices = (applicationId: number, type: string) =>
    sql(
      db.url,
      `SELECT e.payload, e.created_at, d.status, d.destination, d.ignores_subscription, d.next_attempt_at,
              q.destination AS queue_destination, q.due_at, q.paused
         FROM events e JOIN deliveries d ON d.event_id = e.id LEFT JOIN delivery_queue q ON q.delivery_id = d.id
        WHERE e.application_id = $1 AND e.event_type = $2 ORDER BY e.created_at`,
      [applicationId, type],
    ).then((found) => found.map((notice) => ({ ...notice, payload: JSON.parse(notice.payload) })));

  describe('disable', () => {
    it('pauses the queued deliveries, queue row and delivery both, leaves a leased one to its worker and the rest alone', async () => {
      const app = await application();
      const other = await application();
      const now = new Date();
      const queued = await deliveries(app, 'pending', 2);
      // A lease that has run out no longer holds the delivery: it is paused like the others.
      const [expired] = await deliveries(app, 'pending');
      await sql(db.url, `UPDATE delivery_queue SET lease_token = 'gone', lease_until = $2 WHERE delivery_id = $1`, [
        expired,
        new Date(now.getTime() - 1_000),
      ]);
      const [leased] = await deliveries(app, 'sending');
      const [succeeded] = await deliveries(app, 'succeeded');
      // A notice about the application goes to the operator's endpoint, which is not disabled.
      const [notice] = await deliveries(app, 'pending', 1, { destination: 'operational' });
      const [otherQueued] = await deliveries(other, 'pending');

      const status = await health.disable(scopeOf(app), 'manual', now, noticeIds, testAudit);

      expect(status).toEqual({
        state: 'disabled',
        disabledAt: now,
        disabledReason: 'manual',
        failingSince: null,
        lastSuccessAt: null,
        consecutiveFailures: 0,
      });
      expect(await health.status(scopeOf(app))).toEqual(status);
      expect((await rows([...queued, expired])).map((r) => [r.status, r.paused, r.updated_at])).toEqual([
        ['paused', true, now],
        ['paused', true, now],
        ['paused', true, now],
      ]);
      expect((await rows([leased, succeeded, notice, otherQueued])).map((r) => [r.id, r.status, r.paused])).toEqual([
        [leased, 'sending', false],
        [succeeded, 'succeeded', null],
        [notice, 'pending', false],
        [otherQueued, 'pending', false],
      ]);
      // No operational webhook: no notice stored.
      expect(await notices(app, 'webhook.disabled')).toEqual([]);
    });

    it('takes over a lease that ran out, so that worker’s late finish cannot make a paused delivery pending again', async () => {
      const app = await application();
      const now = new Date();
      const [expired] = await deliveries(app, 'pending');
      await sql(db.url, `UPDATE delivery_queue SET lease_token = 'late-worker', lease_until = $2 WHERE delivery_id = $1`, [
        expired,
        new Date(now.getTime() - 1_000),
      ]);
      await health.disable(scopeOf(app), 'manual', now, noticeIds, testAudit);

      // The worker that held it, still alive, reports a failed attempt with a retry to come.
      const retry = { status: 'pending' as const, nextAttemptAt: new Date(now.getTime() + 60_000), now: new Date() };
      const attempt = {
        startedAt: now,
        durationMs: 30_000,
        url: 'http://10.0.0.1:9/hook',
        responseStatus: 503,
        responseExcerpt: null,
        error: null,
        nextAttemptAt: retry.nextAttemptAt,
        requestHeaders: null,
      };
      const finished = await new DeliveryQueueRepository(pool).finish(
        { id: expired, applicationId: 0, orderingKey: null, manualAttempt: false },
        'late-worker',
        retry,
        attempt,
      );

      expect(finished).toBe(false);
      expect((await rows([expired])).map((r) => [r.status, r.paused])).toEqual([['paused', true]]);
    });

    it('queues webhook.disabled with its queue row when an operational webhook is configured, and only on the change', async () => {
      await configureOperationalWebhook();
      const failingSince = new Date(Date.now() - 2 * HOUR);
      const app = await application({ failingSince, consecutiveFailures: 4 });
      const now = new Date();

      await health.disable(scopeOf(app), 'manual', now, noticeIds, testAudit);

      expect(await notices(app, 'webhook.disabled')).toEqual([
        {
          payload: { application_id: app, reason: 'manual', failing_since: failingSince.toISOString(), consecutive_failures: 4 },
          created_at: now,
          status: 'pending',
          destination: 'operational',
          ignores_subscription: true,
          next_attempt_at: now,
          queue_destination: 'operational',
          due_at: now,
          paused: false,
        },
      ]);

      // Already disabled: its reason and time stay, and nothing more is queued.
      const again = await health.disable(scopeOf(app), 'failing', new Date(now.getTime() + 1_000), noticeIds, testAudit);
      expect(again).toMatchObject({ state: 'disabled', disabledAt: now, disabledReason: 'manual' });
      expect(await notices(app, 'webhook.disabled')).toHaveLength(1);
    });

    it('answers null for an application without a webhook, as status and enable do, and queues nothing', async () => {
      await configureOperationalWebhook();
      const app = await application({ webhook: false });

      expect(await health.status(scopeOf(app))).toBeNull();
      expect(await health.disable(scopeOf(app), 'manual', new Date(), noticeIds, testAudit)).toBeNull();
      expect(await health.enable(scopeOf(app), new Date(), noticeIds, testAudit)).toBeNull();
      expect(await sql(db.url, 'SELECT id FROM events WHERE application_id = $1', [app])).toEqual([]);
    });
  });

  describe('enable', () => {
    it('resumes paused deliveries due at their creation time with their attempts, clears the failure streak and reports the count', async () => {
      await configureOperationalWebhook();
      const app = await application({ state: 'disabled', failingSince: new Date(Date.now() - 3 * HOUR), consecutiveFailures: 7 });
      const now = new Date();
      const older = await deliveries(app, 'paused', 1, { createdAt: new Date(now.getTime() - 2 * HOUR), attemptCount: 2 });
      const newer = await deliveries(app, 'paused', 2, { createdAt: new Date(now.getTime() - HOUR) });
      const [leased] = await deliveries(app, 'sending');
      const [failed] = await deliveries(app, 'failed');

      const status = await health.enable(scopeOf(app), now, noticeIds, testAudit);

      expect(status).toEqual({
        state: 'active',
        disabledAt: null,
        disabledReason: null,
        failingSince: null,
        lastSuccessAt: null,
        consecutiveFailures: 0,
      });
      const resumed = await rows([...older, ...newer]);
      expect(resumed.map((r) => [r.status, r.paused, r.updated_at, r.attempt_count])).toEqual([
        ['pending', false, now, 2],
        ['pending', false, now, 0],
        ['pending', false, now, 0],
      ]);
      for (const row of resumed) {
        expect(row.due_at).toEqual(row.created_at);
        expect(row.next_attempt_at).toEqual(row.created_at);
      }
      expect((await rows([leased, failed])).map((r) => [r.status, r.paused])).toEqual([
        ['sending', false],
        ['failed', null],
      ]);
      expect(await notices(app, 'webhook.enabled')).toEqual([
        expect.objectContaining({
          payload: { application_id: app, reason: 'manual', paused_deliveries: 3 },
          destination: 'operational',
          queue_destination: 'operational',
          due_at: now,
          paused: false,
        }),
      ]);

      // Already active: nothing more is queued.
      expect(await health.enable(scopeOf(app), new Date(now.getTime() + 1_000), noticeIds, testAudit)).toMatchObject({ state: 'active' });
      expect(await notices(app, 'webhook.enabled')).toHaveLength(1);
    });

    it('pauses and resumes more deliveries than one batch holds, and queues no notice without an operational webhook', async () => {
      const app = await application();
      const count = HEALTH_BATCH_SIZE + 5;
      const at = new Date(Date.now() - HOUR);
      await sql(db.url, `INSERT INTO events (id, application_id, event_type, payload, created_at) VALUES ($1, $2, 'acw_start', '{}', $3)`, [
        `evt_many_${app}`,
        app,
        at,
      ]);
      await sql(
        db.url,
        `WITH d AS (
           INSERT INTO deliveries (id, event_id, application_id, event_type, status, next_attempt_at, created_at, updated_at)
           SELECT 'dlv_many_' || $1::int || '_' || n, 'evt_many_' || $1::int, $1::int, 'acw_start', 'pending', $2, $2, $2
             FROM generate_series(1, $3::int) n
           RETURNING id, application_id, created_at
         )
         INSERT INTO delivery_queue (delivery_id, application_id, due_at) SELECT id, application_id, created_at FROM d`,
        [app, at, count],
      );
      const byState = () =>
        sql(
          db.url,
          `SELECT d.status::text, q.paused, count(*)::int AS count FROM deliveries d JOIN delivery_queue q ON q.delivery_id = d.id
            WHERE d.application_id = $1 GROUP BY 1, 2`,
          [app],
        );

      await health.disable(scopeOf(app), 'manual', new Date(), noticeIds, testAudit);
      expect(await byState()).toEqual([{ status: 'paused', paused: true, count }]);

      await health.enable(scopeOf(app), new Date(), noticeIds, testAudit);
      expect(await byState()).toEqual([{ status: 'pending', paused: false, count }]);
      expect(await sql(db.url, `SELECT id FROM events WHERE application_id = $1 AND event_type LIKE 'webhook.%'`, [app])).toEqual([]);
    });
  });

  describe('disableFailing', () => {
    it('disables as failing only active webhooks failing since the threshold or before with enough failures, pausing their deliveries', async () => {
      await configureOperationalWebhook();
      const now = new Date();
      const threshold = new Date(now.getTime() - HOUR);
      const longFailing = new Date(now.getTime() - 2 * HOUR);
      const failing = await application({ failingSince: longFailing, consecutiveFailures: 5 });
      const sinceThreshold = await application({ failingSince: threshold, consecutiveFailures: 9 });
      const notLongEnough = await application({ failingSince: new Date(now.getTime() - HOUR / 2), consecutiveFailures: 50 });
      const tooFew = await application({ failingSince: longFailing, consecutiveFailures: 4 });
      const alreadyDisabled = await application({ state: 'disabled', failingSince: longFailing, consecutiveFailures: 10 });
      const healthy = await application();
      const mine = [failing, sinceThreshold, notLongEnough, tooFew, alreadyDisabled, healthy];
      const queued = new Map<number, string>();
      for (const app of mine) queued.set(app, (await deliveries(app, 'pending'))[0]);

      const disabled = await health.disableFailing(now, threshold, 5, noticeIds, testAudit);

      expect(disabled.filter((app) => mine.includes(app)).sort((a, b) => a - b)).toEqual([failing, sinceThreshold]);
      for (const app of mine) {
        const expected = app === failing || app === sinceThreshold ? 'paused' : 'pending';
        expect([app, (await rows([queued.get(app)!]))[0].status]).toEqual([app, expected]);
      }
      expect(await health.status(scopeOf(failing))).toMatchObject({ state: 'disabled', disabledAt: now, disabledReason: 'failing' });
      expect(await health.status(scopeOf(alreadyDisabled))).toMatchObject({ state: 'disabled', disabledReason: 'manual' });
      expect(await health.status(scopeOf(tooFew))).toMatchObject({ state: 'active' });
      expect((await notices(failing, 'webhook.disabled')).map((n) => n.payload)).toEqual([
        { application_id: failing, reason: 'failing', failing_since: longFailing.toISOString(), consecutive_failures: 5 },
      ]);
      expect(await notices(alreadyDisabled, 'webhook.disabled')).toEqual([]);
      expect(await notices(tooFew, 'webhook.disabled')).toEqual([]);
    });
  });
  describe('audit records (PRODUCT.md §16)', () => {
    const audited = (app: number) =>
      sql(db.url, `SELECT action, actor_id, application_id FROM audit_log WHERE application_id = $1 ORDER BY id`, [app]);
    const recordFor = (app: number, action: 'webhook.disabled' | 'webhook.enabled') => () => ({
      ...testAudit(),
      action,
      applicationId: app,
    });
    const refusingAudit = async <T>(work: () => Promise<T>): Promise<T> => {
      await sql(
        db.url,
        `CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RAISE EXCEPTION ''no audit''; END';
         CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_audit()`,
      );
      try {
        return await work();
      } finally {
        await sql(db.url, 'DROP TRIGGER refuse_audit ON audit_log; DROP FUNCTION refuse_audit()');
      }
    };

    it('hand the record what the webhook was and whether it changed, and write it; none without a webhook', async () => {
      const app = await application();
      const seen: unknown[] = [];
      await health.disable(scopeOf(app), 'manual', new Date(), noticeIds, (change) => {
        seen.push(change);
        return recordFor(app, 'webhook.disabled')();
      });
      await health.disable(scopeOf(app), 'manual', new Date(), noticeIds, (change) => {
        seen.push(change);
        return recordFor(app, 'webhook.disabled')();
      });
      await health.enable(scopeOf(app), new Date(), noticeIds, (change) => {
        seen.push(change);
        return recordFor(app, 'webhook.enabled')();
      });
      expect(seen).toEqual([
        { before: expect.objectContaining({ state: 'active' }), changed: true },
        { before: expect.objectContaining({ state: 'disabled', disabledReason: 'manual' }), changed: false },
        { before: expect.objectContaining({ state: 'disabled' }), changed: true, pausedDeliveries: 0 },
      ]);
      expect((await audited(app)).map((row) => row.action)).toEqual(['webhook.disabled', 'webhook.disabled', 'webhook.enabled']);

      const bare = await application({ webhook: false });
      expect(await health.disable(scopeOf(bare), 'manual', new Date(), noticeIds, recordFor(bare, 'webhook.disabled'))).toBeNull();
      expect(await audited(bare)).toEqual([]);
    });

    it('make no change whose record cannot be written: disable, enable and auto-disable roll back', async () => {
      await configureOperationalWebhook();
      const now = new Date();
      const failing = await application({ failingSince: new Date(now.getTime() - 2 * HOUR), consecutiveFailures: 20 });
      const disabled = await application({ state: 'disabled' });
      const [queued] = await deliveries(failing, 'pending');

      await expect(refusingAudit(() => health.disable(scopeOf(failing), 'manual', now, noticeIds, testAudit))).rejects.toThrow(/no audit/);
      await expect(refusingAudit(() => health.enable(scopeOf(disabled), now, noticeIds, testAudit))).rejects.toThrow(/no audit/);
      await expect(
        refusingAudit(() => health.disableFailing(now, new Date(now.getTime() - HOUR), 10, noticeIds, testAudit)),
      ).rejects.toThrow(/no audit/);

      expect(await health.status(scopeOf(failing))).toMatchObject({ state: 'active', consecutiveFailures: 20 });
      expect(await health.status(scopeOf(disabled))).toMatchObject({ state: 'disabled' });
      expect((await rows([queued]))[0].status).toBe('pending');
      expect(await notices(failing, 'webhook.disabled')).toEqual([]);
      expect(await notices(disabled, 'webhook.enabled')).toEqual([]);
    });
  });

  describe('warnings before disabling (PRODUCT.md §16)', () => {
    const willDisableAt = (failingSince: Date) => new Date(failingSince.getTime() + 10 * HOUR);

    it('warns once per failing streak that started by the cutoff and only while active', async () => {
      const now = new Date();
      const cutoff = new Date(now.getTime() - 5 * HOUR);
      const since = new Date(now.getTime() - 6 * HOUR);
      const failing = await application({ failingSince: since, consecutiveFailures: 3 });
      const young = await application({ failingSince: new Date(now.getTime() - 4 * HOUR), consecutiveFailures: 30 });
      const disabled = await application({ state: 'disabled', failingSince: since, consecutiveFailures: 30 });
      const mine = (warned: number[]) => warned.filter((app) => [failing, young, disabled].includes(app));

      await configureOperationalWebhook();
      expect(mine(await health.warnFailing(now, cutoff, willDisableAt, noticeIds))).toEqual([failing]);
      expect((await notices(failing, 'webhook.failing')).map((n) => n.payload)).toEqual([
        {
          application_id: failing,
          failing_since: since.toISOString(),
          consecutive_failures: 3,
          will_disable_at: willDisableAt(since).toISOString(),
        },
      ]);
      expect(mine(await health.warnFailing(now, cutoff, willDisableAt, noticeIds))).toEqual([]);

      // A streak that ended and began again is a new streak: recovered first, then warned again.
      const later = new Date(now.getTime() - 5.5 * HOUR);
      await sql(db.url, 'UPDATE webhooks SET failing_since = $2, last_success_at = $3 WHERE application_id = $1', [failing, later, now]);
      expect(mine(await health.reportRecovered(now, noticeIds))).toEqual([failing]);
      expect((await notices(failing, 'webhook.recovered')).map((n) => n.payload)).toEqual([
        { application_id: failing, failing_since: since.toISOString(), recovered_at: now.toISOString() },
      ]);
      expect(mine(await health.warnFailing(now, cutoff, willDisableAt, noticeIds))).toEqual([failing]);
      expect(await notices(failing, 'webhook.failing')).toHaveLength(2);
    });

    it('reports no recovery for a streak that is still going, or for a webhook disabled since the warning', async () => {
      await configureOperationalWebhook();
      const now = new Date();
      const since = new Date(now.getTime() - 6 * HOUR);
      const going = await application({ failingSince: since, consecutiveFailures: 3 });
      const disabledAfter = await application({ failingSince: since, consecutiveFailures: 30 });
      await health.warnFailing(now, new Date(now.getTime() - 5 * HOUR), willDisableAt, noticeIds);
      await health.disable(scopeOf(disabledAfter), 'manual', now, noticeIds, testAudit);
      await health.enable(scopeOf(disabledAfter), now, noticeIds, testAudit);

      const reported = await health.reportRecovered(now, noticeIds);
      expect(reported).not.toContain(going);
      expect(reported).not.toContain(disabledAfter);
      expect(await notices(disabledAfter, 'webhook.recovered')).toEqual([]);
    });
  });
});
