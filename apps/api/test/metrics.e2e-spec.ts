import { setDeliveryStatus, sql } from '@herald/database/testing';
import { proxyDatabase } from '@herald/testing';
import { Tenant } from './support/fixtures';
import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';

/** The value of one sample line, e.g. `herald_deliveries_queued{state="due"}`; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics (PRODUCT.md §7)', () => {
  let t: TestApp;
  let tenant: Tenant;
  const scrape = async (app: TestApp = t) => {
    const res = await app.http.get('/metrics');
    expect(res.status).toBe(200);
    return res.text;
  };

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenantWithWebhook();
    await t.http
      .put(`/application/${tenant.applicationId}/webhook/subscription/acw_start`)
      .set('Authorization', tenant.key)
      .send({})
      .expect(200);
  });
  afterAll(() => t.close());

  it('answers without a key, in the Prometheus text format, with the process figures', async () => {
    const res = await t.http.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(sample(res.text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(res.text).toContain('# TYPE herald_http_request_duration_seconds histogram');
  });

  it('counts requests by route pattern, method and status, never by raw URL', async () => {
    const series = (method: string, route: string, status: number) =>
      `herald_http_request_duration_seconds_count{method="${method}",route="${route}",status="${status}"}`;
    const ok = series('GET', '/application/:application_id/webhook', 200);
    const forbidden = series('GET', '/application/:application_id/webhook', 403);
    const unmatched = series('other', 'unmatched', 404);
    const before = await scrape();

    await t.http.get(`/application/${tenant.applicationId}/webhook`).set('Authorization', tenant.key).expect(200);
    await t.http.get(`/application/${tenant.applicationId}/webhook`).set('Authorization', tenant.key).expect(200);
    await t.http.get(`/application/${tenant.applicationId}/webhook`).expect(403);
    await t.http.get('/no/such/route/42').expect(404);
    await t.http.get('/no/such/route/43').expect(404);

    const after = await scrape();
    const grew = (name: string) => (sample(after, name) ?? 0) - (sample(before, name) ?? 0);
    expect([grew(ok), grew(forbidden), grew(unmatched)]).toEqual([2, 1, 2]);
    expect(after).not.toContain('/no/such/route');
    expect(after).not.toContain(`/application/${tenant.applicationId}/`);
  });

  it('reports the delivery queue from the database: due, scheduled, sending, and the oldest wait', async () => {
    const publish = () =>
      t.http
        .post(`/application/${tenant.applicationId}/events`)
        .set('Authorization', tenant.key)
        .send({ event: 'acw_start', payload: {} })
        .expect(202)
        .then((res) => res.body.data.deliveries[0] as string);
    const [waiting, retrying, claimed] = [await publish(), await publish(), await publish()];
    // No worker runs here: shape the queue by hand, as a worker and the schedule would.
    await sql(t.db.url, `UPDATE delivery_queue SET due_at = now() - interval '42 seconds' WHERE delivery_id = $1`, [waiting]);
    await sql(t.db.url, `UPDATE delivery_queue SET due_at = now() + interval '1 hour' WHERE delivery_id = $1`, [retrying]);
    await setDeliveryStatus(t.db.url, claimed, 'sending');

    const text = await scrape();
    expect(sample(text, 'herald_deliveries_queued{state="due"}')).toBe(1);
    expect(sample(text, 'herald_deliveries_queued{state="scheduled"}')).toBe(1);
    expect(sample(text, 'herald_deliveries_queued{state="sending"}')).toBe(1);
    const lag = sample(text, 'herald_delivery_lag_seconds')!;
    expect(lag).toBeGreaterThanOrEqual(42);
    expect(lag).toBeLessThan(120);

    await setDeliveryStatus(t.db.url, [waiting, retrying, claimed], 'succeeded', ['next_attempt_at = NULL']);
    const drained = await scrape();
    expect(sample(drained, 'herald_deliveries_queued{state="due"}')).toBe(0);
    expect(sample(drained, 'herald_delivery_lag_seconds')).toBe(0);
  });

  it('reports paused deliveries and webhooks by state', async () => {
    const owner = await t.fixtures.tenantWithWebhook();
    await t.http
      .put(`/application/${owner.applicationId}/webhook/subscription/acw_start`)
      .set('Authorization', owner.key)
      .send({})
      .expect(200);
    const before = await scrape();
    const [active, disabled, paused] = ['active', 'disabled', 'paused'].map((state) =>
      state === 'paused'
        ? sample(before, `herald_deliveries_queued{state="paused"}`)!
        : sample(before, `herald_webhooks{state="${state}"}`)!,
    );
    await t.http.post(`/application/${owner.applicationId}/webhook/disable`).set('Authorization', owner.key).expect(200);
    await t.http
      .post(`/application/${owner.applicationId}/events`)
      .set('Authorization', owner.key)
      .send({ event: 'acw_start', payload: {} })
      .expect(202);
    const after = await scrape();
    expect(sample(after, 'herald_webhooks{state="active"}')).toBe(active - 1);
    expect(sample(after, 'herald_webhooks{state="disabled"}')).toBe(disabled + 1);
    expect(sample(after, 'herald_deliveries_queued{state="paused"}')).toBe(paused + 1);
  });

  it('is not rate limited and does not spend any key’s tokens', async () => {
    const limited = await createTestApp({
      databaseUrl: t.db.url,
      env: { HERALD_RATE_LIMIT_PER_SECOND: '1', HERALD_RATE_LIMIT_BURST: '1' },
    });
    try {
      for (let i = 0; i < 5; i++) await scrape(limited);
      expect((await limited.http.get('/event_types').set('Authorization', ADMIN_KEY)).status).toBe(200);
    } finally {
      await limited.app.close();
    }
  });

  it('still answers while the database is away, leaving out the queue rather than stale figures', async () => {
    const { proxy, url } = await proxyDatabase(t.db.url);
    const app = await createTestApp({ databaseUrl: url });
    try {
      const before = await scrape(app);
      expect(sample(before, 'herald_deliveries_queued{state="due"}')).toBe(0);
      expect(sample(before, 'herald_database_up')).toBe(1);

      await proxy.cut();
      const text = await scrape(app);
      expect(sample(text, 'herald_database_up')).toBe(0);
      expect(sample(text, 'herald_deliveries_queued{state="due"}')).toBeUndefined();
      expect(sample(text, 'herald_delivery_lag_seconds')).toBeNaN();
      expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);

      await proxy.resume();
      const after = await scrape(app);
      expect(sample(after, 'herald_deliveries_queued{state="due"}')).toBe(0);
      expect(sample(after, 'herald_database_up')).toBe(1);
    } finally {
      await app.app.close();
      await proxy.cut();
    }
  });
});
