import { WebhookHealthRepository } from '@herald/database/queue';
import { Sink } from '@herald/testing';
import { AutoDisableJob } from '../src/jobs/auto-disable-job';
import { TestWorker } from './support/test-worker';

const HOUR_MS = 60 * 60 * 1000;

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

    await worker.app.get(WebhookHealthRepository).enable(app, new Date());
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
});
