import { UlidIdGenerator } from '@herald/core';
import { DeliveryLogRepository, OperationalWebhookRepository } from '@herald/database';
import { testAudit } from '@herald/database/testing';
import { WebhookHealthRepository } from '@herald/database/queue';
import { Webhook } from 'standardwebhooks';
import { Sink } from '@herald/testing';
import { AutoDisableJob } from '../src/jobs/auto-disable-job';
import { EndpointWarningsJob } from '../src/jobs/endpoint-warnings-job';
import { TestWorker } from './support/test-worker';

const HOUR_MS = 60 * 60 * 1000;
const ids = new UlidIdGenerator();
const noticeIds = () => ({ eventId: ids.next('evt'), deliveryId: ids.next('dlv') });

/** PRODUCT.md §10 in the worker: the failure streak it keeps, deliveries it pauses, and auto-disable. */
describe('endpoint health in the worker', () => {
  let worker: TestWorker;
  let answer = 500;
  const sink = new Sink(() => ({ status: answer }));
  const streak = async (applicationId: number) =>
    (
      await worker.sql<{ failing_since: Date | null; last_success_at: Date | null; consecutive_failures: number; state: string }>(
        'SELECT failing_since, last_success_at, consecutive_failures, state FROM webhooks WHERE application_id = $1',
        [applicationId],
      )
    )[0];

  beforeAll(async () => {
    await sink.start();
    worker = await TestWorker.start({ HERALD_DISABLE_AFTER_HOURS: '120' });
  });
  afterAll(async () => {
    await worker.close();
    await sink.close();
  });

  it('counts failed attempts from the first one, and a success ends the streak', async () => {
    answer = 500;
    const app = await worker.application({ url: sink.url(), retryEnabled: 0 });
    const started = Date.now();
    for (let i = 0; i < 3; i++) await worker.settled(app, (await worker.publish(app))!);
    const failing = await streak(app.applicationId);
    expect(failing.consecutive_failures).toBe(3);
    expect(failing.failing_since!.getTime()).toBeGreaterThanOrEqual(started - 1000);
    expect(failing.last_success_at).toBeNull();
    const firstFailure = failing.failing_since;

    await worker.settled(app, (await worker.publish(app))!);
    expect((await streak(app.applicationId)).failing_since).toEqual(firstFailure);

    answer = 200;
    await worker.settled(app, (await worker.publish(app))!);
    expect(await streak(app.applicationId)).toMatchObject({
      failing_since: null,
      consecutive_failures: 0,
      last_success_at: expect.any(Date),
    });
  });

  it('pauses, without an attempt, a delivery claimed while its webhook is disabled; enabling sends it', async () => {
    answer = 200;
    await worker.stopWorker();
    const app = await worker.application({ url: sink.url() });
    const id = (await worker.publish(app))!;
    // Disabled behind the api's back, so the pending delivery is left for the worker to find.
    await worker.sql(`UPDATE webhooks SET state = 'disabled', disabled_at = now(), disabled_reason = 'manual' WHERE application_id = $1`, [
      app.applicationId,
    ]);
    const received = sink.received.length;
    await worker.startWorker();
    expect((await worker.settled(app, id, ['paused'])).attemptCount).toBe(0);
    expect(sink.received).toHaveLength(received);

    await worker.app.get(WebhookHealthRepository).enable(app, new Date(), noticeIds, testAudit);
    expect((await worker.settled(app, id)).status).toBe('succeeded');
    expect(sink.received).toHaveLength(received + 1);
  });

  it('the auto-disable job disables a webhook failing for HERALD_DISABLE_AFTER_HOURS with 10 attempts', async () => {
    const app = await worker.application({ url: sink.url() });
    const other = await worker.application({ url: sink.url() });
    await worker.sql('UPDATE webhooks SET failing_since = $2, consecutive_failures = 10 WHERE application_id = $1', [
      app.applicationId,
      new Date(Date.now() - 121 * HOUR_MS),
    ]);
    await worker.sql('UPDATE webhooks SET failing_since = $2, consecutive_failures = 10 WHERE application_id = $1', [
      other.applicationId,
      new Date(Date.now() - 119 * HOUR_MS),
    ]);
    const disabled = await worker.inWorker(AutoDisableJob).runOnce();
    expect(disabled).toContain(app.applicationId);
    expect(disabled).not.toContain(other.applicationId);
    expect((await streak(app.applicationId)).state).toBe('disabled');
    expect((await streak(other.applicationId)).state).toBe('active');
  });

  it('records auto-disable in the audit log as Herald itself, in the same transaction as the change (PRODUCT.md §16)', async () => {
    const app = await worker.application({ url: sink.url() });
    await worker.sql('UPDATE webhooks SET failing_since = $2, consecutive_failures = 11 WHERE application_id = $1', [
      app.applicationId,
      new Date(Date.now() - 130 * HOUR_MS),
    ]);
    const audited = () =>
      worker.sql<{
        actor_type: string;
        actor_id: string;
        actor_prefix: string | null;
        action: string;
        account_id: string;
        request_id: string | null;
        changes: object;
        at: Date;
      }>(
        'SELECT actor_type, actor_id, actor_prefix, action, account_id, request_id, changes, at FROM audit_log WHERE application_id = $1',
        [app.applicationId],
      );
    const before = (await audited()).length;
    expect(await worker.inWorker(AutoDisableJob).runOnce()).toContain(app.applicationId);
    const records = (await audited()).slice(before);
    expect(records).toEqual([
      {
        actor_type: 'system',
        actor_id: 'auto-disable',
        actor_prefix: null,
        action: 'webhook.disabled',
        account_id: app.accountId,
        request_id: null,
        at: expect.any(Date),
        changes: {
          state: ['active', 'disabled'],
          disabled_at: [null, records[0].at.toISOString()],
          disabled_reason: [null, 'failing'],
        },
      },
    ]);
    // A second pass finds nothing to disable, and records nothing.
    expect(await worker.inWorker(AutoDisableJob).runOnce()).not.toContain(app.applicationId);
    expect(await audited()).toHaveLength(before + 1);
  });

  describe('notices to the operational webhook', () => {
    let ops: Sink;
    let opsSecret: string;
    const received = (type: string) => ops.received.map((request) => JSON.parse(request.body)).filter((body) => body.type === type);

    beforeAll(async () => {
      ops = await new Sink().start();
      const operational = worker.app.get(OperationalWebhookRepository);
      await operational.upsert(
        { url: ops.url('/ops'), headers: { 'X-Ops': 'yes' } },
        'whsec_' + Buffer.alloc(32, 7).toString('base64'),
        new Date(),
        testAudit,
      );
      opsSecret = (await operational.secret())!;
    });
    afterAll(async () => {
      await worker.app.get(OperationalWebhookRepository).delete(new Date(), testAudit);
      await ops.close();
    });

    it('delivery.exhausted when a delivery fails for good, signed with the operational secret; not again for a manual retry', async () => {
      answer = 500;
      const app = await worker.application({ url: sink.url(), retryEnabled: 0 });
      const id = (await worker.publish(app))!;
      await worker.settled(app, id);
      const [request] = await ops.waitFor(1, 15_000);
      expect(request.headers['x-ops']).toBe('yes');
      const body = new Webhook(opsSecret).verify(request.body, request.headers as Record<string, string>) as { type: string; data: object };
      expect(body.type).toBe('delivery.exhausted');
      const [{ event_id: eventId }] = await worker.sql<{ event_id: string }>('SELECT event_id FROM deliveries WHERE id = $1', [id]);
      expect(body.data).toEqual({
        application_id: app.applicationId,
        delivery_id: id,
        event_id: eventId,
        event: 'acw_start',
        attempts: 1,
        reason: 'http_500',
      });
      // The operator's notice does not count in the application's failure streak.
      expect((await streak(app.applicationId)).consecutive_failures).toBe(1);

      await worker.app.get(DeliveryLogRepository).requestAttempt(app, id, new Date());
      await worker.settled(app, id);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(received('delivery.exhausted').filter((notice) => notice.data.delivery_id === id)).toHaveLength(1);
    });

    it('webhook.disabled from auto-disable, with the failure streak that caused it', async () => {
      const app = await worker.application({ url: sink.url() });
      await worker.sql('UPDATE webhooks SET failing_since = $2, consecutive_failures = 12 WHERE application_id = $1', [
        app.applicationId,
        new Date(Date.now() - 200 * HOUR_MS),
      ]);
      expect(await worker.inWorker(AutoDisableJob).runOnce()).toContain(app.applicationId);
      await waitForNotice('webhook.disabled', app.applicationId);
      const [notice] = received('webhook.disabled').filter((n) => n.data.application_id === app.applicationId);
      expect(notice.data).toEqual({
        application_id: app.applicationId,
        reason: 'failing',
        failing_since: expect.any(String),
        consecutive_failures: 12,
      });
    });

    it('webhook.failing once per failing streak when half the disable window has passed, webhook.recovered when it succeeds again', async () => {
      answer = 500;
      const app = await worker.application({ url: sink.url(), retryEnabled: 0 });
      const young = await worker.application({ url: sink.url() });
      const failingSince = new Date(Date.now() - 61 * HOUR_MS);
      await worker.sql('UPDATE webhooks SET failing_since = $2, consecutive_failures = 7 WHERE application_id = $1', [
        app.applicationId,
        failingSince,
      ]);
      await worker.sql('UPDATE webhooks SET failing_since = $2, consecutive_failures = 30 WHERE application_id = $1', [
        young.applicationId,
        new Date(Date.now() - 59 * HOUR_MS),
      ]);
      const warnings = worker.inWorker(EndpointWarningsJob);

      const first = await warnings.runOnce();
      expect(first.failing).toContain(app.applicationId);
      expect(first.failing).not.toContain(young.applicationId);
      await waitForNotice('webhook.failing', app.applicationId);
      const [failing] = received('webhook.failing').filter((n) => n.data.application_id === app.applicationId);
      expect(failing.data).toEqual({
        application_id: app.applicationId,
        failing_since: failingSince.toISOString(),
        consecutive_failures: 7,
        will_disable_at: new Date(failingSince.getTime() + 120 * HOUR_MS).toISOString(),
      });

      // Still the same streak, and more failures in it: no second warning.
      await worker.settled(app, (await worker.publish(app))!);
      expect((await warnings.runOnce()).failing).not.toContain(app.applicationId);

      answer = 200;
      await worker.settled(app, (await worker.publish(app))!);
      expect((await warnings.runOnce()).recovered).toEqual(expect.arrayContaining([app.applicationId]));
      await waitForNotice('webhook.recovered', app.applicationId);
      const [recovered] = received('webhook.recovered').filter((n) => n.data.application_id === app.applicationId);
      expect(recovered.data).toEqual({
        application_id: app.applicationId,
        failing_since: failingSince.toISOString(),
        recovered_at: expect.any(String),
      });
      expect((await warnings.runOnce()).recovered).not.toContain(app.applicationId);

      // A new streak is warned about again.
      await worker.sql('UPDATE webhooks SET failing_since = $2, consecutive_failures = 3 WHERE application_id = $1', [
        app.applicationId,
        new Date(Date.now() - 70 * HOUR_MS),
      ]);
      expect((await warnings.runOnce()).failing).toContain(app.applicationId);
    });

    it('no webhook.recovered for a warned webhook that was disabled instead', async () => {
      const app = await worker.application({ url: sink.url() });
      await worker.sql('UPDATE webhooks SET failing_since = $2, consecutive_failures = 12 WHERE application_id = $1', [
        app.applicationId,
        new Date(Date.now() - 125 * HOUR_MS),
      ]);
      const warnings = worker.inWorker(EndpointWarningsJob);
      expect((await warnings.runOnce()).failing).toContain(app.applicationId);
      expect(await worker.inWorker(AutoDisableJob).runOnce()).toContain(app.applicationId);
      await worker.app.get(WebhookHealthRepository).enable(app, new Date(), noticeIds, testAudit);
      expect(await warnings.runOnce()).toEqual({
        recovered: expect.not.arrayContaining([app.applicationId]),
        failing: expect.not.arrayContaining([app.applicationId]),
      });
    });

    async function waitForNotice(type: string, applicationId: number): Promise<void> {
      const deadline = Date.now() + 15_000;
      while (!received(type).some((notice) => notice.data.application_id === applicationId)) {
        if (Date.now() > deadline) throw new Error(`no ${type} for application ${applicationId}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  });
});
