import { sql } from '@herald/database/testing';
import { createTestApp, ADMIN_KEY, TestApp } from './support/test-app';
import { detailFields, expectError } from './support/expect-error';
import { Tenant } from './support/fixtures';

const ROUTE = '/admin/operational_webhook';

/** PRODUCT.md §10: the operator's own endpoint, and the notices Herald queues for it. */
describe('the operational webhook (PRODUCT.md §10)', () => {
  let t: TestApp;
  const admin = () => ({ Authorization: ADMIN_KEY });
  const notices = async (applicationId: number) =>
    sql<{ event_type: string; status: string; payload: string }>(
      t.db.url,
      `SELECT d.event_type, d.status, e.payload FROM deliveries d JOIN events e ON e.id = d.event_id
        WHERE d.application_id = $1 AND d.destination = 'operational' ORDER BY d.id`,
      [applicationId],
    );
  const route = (as: Tenant, path: string) => `/application/${as.applicationId}${path}`;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers 404-07 until one is set; a state change meanwhile queues nothing', async () => {
    for (const [method, path] of [
      ['get', ROUTE],
      ['delete', ROUTE],
      ['get', `${ROUTE}/secret`],
    ] as const) {
      expectError(await t.http[method](path).set(admin()), 404, '404-07');
    }
    const tenant = await t.fixtures.tenantWithWebhook();
    await t.http.post(route(tenant, '/webhook/disable')).set({ Authorization: tenant.key }).expect(200);
    expect(await notices(tenant.applicationId)).toEqual([]);
  });

  it.each([
    [{}, 400, '400-02', 'url'],
    [{ url: 'https://10.1.2.3/hook' }, 400, '400-05', 'url'],
    [{ url: 'ftp://ops.example.com/hook' }, 400, '400-05', 'url'],
    [{ url: 'https://ops.example.com/hook', headers: { 'Webhook-Id': 'x' } }, 400, '400-06', 'headers'],
  ])('refuses %j with %i %s naming the field', async (body, status, code, field) => {
    const res = await t.http.put(ROUTE).set(admin()).send(body);
    expectError(res, status, code);
    expect(detailFields(res).some((name) => name.startsWith(field))).toBe(true);
  });

  it('is the admin’s: an account key is refused with 403-04', async () => {
    const tenant = await t.fixtures.tenant();
    expectError(await t.http.put(ROUTE).set({ Authorization: tenant.key }).send({ url: 'https://ops.example.com/hook' }), 403, '403-04');
  });

  describe('once set', () => {
    let secret: string;

    beforeAll(async () => {
      const set = await t.http
        .put(ROUTE)
        .set(admin())
        .send({ url: 'https://ops.example.com/hook', headers: { 'X-Ops': '1' } })
        .expect(200);
      expect(set.body).toEqual({
        success: true,
        data: {
          url: 'https://ops.example.com/hook',
          headers: { 'X-Ops': '1' },
          events: ['webhook.disabled', 'webhook.enabled', 'delivery.exhausted', 'webhook.failing', 'webhook.recovered'],
          created_at: expect.any(String),
          updated_at: expect.any(String),
        },
      });
      secret = (await t.http.get(`${ROUTE}/secret`).set(admin()).expect(200)).body.data.secret;
      expect(secret).toMatch(/^whsec_/);
    });

    it('reads back; a replacement keeps the secret', async () => {
      const replaced = await t.http.put(ROUTE).set(admin()).send({ url: 'https://ops2.example.com/hook' }).expect(200);
      expect(replaced.body.data).toMatchObject({ url: 'https://ops2.example.com/hook', headers: {} });
      expect((await t.http.get(ROUTE).set(admin()).expect(200)).body.data.url).toBe('https://ops2.example.com/hook');
      expect((await t.http.get(`${ROUTE}/secret`).set(admin())).body.data.secret).toBe(secret);
    });

    it('queues webhook.disabled and webhook.enabled with the state change, kept out of the customer’s views', async () => {
      const tenant = await t.fixtures.tenantWithWebhook();
      const auth = { Authorization: tenant.key };
      await t.http.put(route(tenant, '/webhook/subscription/acw_start')).set(auth).send({}).expect(200);
      await t.http.post(route(tenant, '/webhook/disable')).set(auth).expect(200);
      await t.http.post(route(tenant, '/webhook/disable')).set(auth).expect(200); // no change, no second notice
      await t.http.post(route(tenant, '/events')).set(auth).send({ event: 'acw_start', payload: {} }).expect(202);
      await t.http.post(route(tenant, '/webhook/enable')).set(auth).expect(200);

      const queued = await notices(tenant.applicationId);
      expect(queued.map((notice) => [notice.event_type, notice.status])).toEqual([
        ['webhook.disabled', 'pending'],
        ['webhook.enabled', 'pending'],
      ]);
      expect(JSON.parse(queued[0].payload)).toEqual({
        application_id: tenant.applicationId,
        reason: 'manual',
        failing_since: null,
        consecutive_failures: 0,
      });
      expect(JSON.parse(queued[1].payload)).toEqual({ application_id: tenant.applicationId, reason: 'manual', paused_deliveries: 1 });

      const deliveries = (await t.http.get(route(tenant, '/deliveries')).set(auth).expect(200)).body.data;
      expect(deliveries.map((d: { event: string }) => d.event)).toEqual(['acw_start']);
      const events = (await t.http.get(route(tenant, '/events')).set(auth).expect(200)).body.data;
      expect(events.map((e: { event: string }) => e.event)).toEqual(['acw_start']);
      const [operational] = await sql<{ id: string; event_id: string }>(
        t.db.url,
        `SELECT id, event_id FROM deliveries WHERE application_id = $1 AND destination = 'operational' LIMIT 1`,
        [tenant.applicationId],
      );
      expectError(await t.http.get(route(tenant, `/deliveries/${operational.id}`)).set(auth), 404, '404-05');
      expectError(await t.http.get(route(tenant, `/events/${operational.event_id}`)).set(auth), 404, '404-05');
      expectError(await t.http.post(route(tenant, `/events/${operational.event_id}/replay`)).set(auth), 404, '404-05');
    });

    it('keeps its event types from customers: not listed, not publishable, not subscribable', async () => {
      const tenant = await t.fixtures.tenantWithWebhook();
      const auth = { Authorization: tenant.key };
      const listed = (await t.http.get('/event_types?limit=100').set(auth).expect(200)).body.data.map(
        (type: { name: string }) => type.name,
      );
      for (const name of ['webhook.disabled', 'webhook.enabled', 'delivery.exhausted', 'webhook.failing', 'webhook.recovered']) {
        expect(listed).not.toContain(name);
        expectError(await t.http.post(route(tenant, '/events')).set(auth).send({ event: name, payload: {} }), 400, '400-04');
        expectError(
          await t.http
            .put(route(tenant, `/webhook/subscription/${name}`))
            .set(auth)
            .send({}),
          400,
          '400-04',
        );
      }
    });

    it('removing it cancels the notices still waiting and answers with what was removed', async () => {
      const tenant = await t.fixtures.tenantWithWebhook();
      await t.http.post(route(tenant, '/webhook/disable')).set({ Authorization: tenant.key }).expect(200);
      expect((await notices(tenant.applicationId)).map((notice) => notice.status)).toEqual(['pending']);
      const removed = await t.http.delete(ROUTE).set(admin()).expect(200);
      expect(removed.body.data.url).toBe('https://ops2.example.com/hook');
      expect((await notices(tenant.applicationId)).map((notice) => notice.status)).toEqual(['cancelled']);
      expectError(await t.http.get(ROUTE).set(admin()), 404, '404-07');
    });
  });
});
