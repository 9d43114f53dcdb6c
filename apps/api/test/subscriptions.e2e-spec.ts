import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';
import { expectError } from './support/expect-error';
import { Tenant } from './support/fixtures';

describe('subscriptions (/application/{id}/webhook/subscription)', () => {
  let t: TestApp;
  let tenant: Tenant;
  let base: string;
  const auth = () => ({ Authorization: tenant.key, 'Content-Type': 'application/json' });

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenantWithWebhook();
    base = `/application/${tenant.applicationId}/webhook/subscription`;
  });
  afterAll(() => t.close());

  it('creates a subscription with defaults ensure_delivery false, active true', async () => {
    const res = await t.http.put(`${base}/acw_start`).set(auth()).send({});
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, subscriptions: { acw_start: { ensure_delivery: false, active: true } } });
  });

  it('changes only the flags given and lists every subscription', async () => {
    await t.http.put(`${base}/voice_campaign_activate`).set(auth()).send({ ensure_delivery: true, active: false }).expect(200);
    const res = await t.http.put(`${base}/acw_start`).set(auth()).send({ ensure_delivery: true });
    expect(res.body.subscriptions).toEqual({
      acw_start: { ensure_delivery: true, active: true },
      voice_campaign_activate: { ensure_delivery: true, active: false },
    });
    await t.http.put(`${base}/acw_start`).set(auth()).send({ active: false }).expect(200);
    const list = await t.http.get(base).set(auth());
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      success: true,
      subscriptions: {
        acw_start: { ensure_delivery: true, active: false },
        voice_campaign_activate: { ensure_delivery: true, active: false },
      },
    });
  });

  it('DELETE (seed 4.2) answers 200 with the map of the subscriptions that remain', async () => {
    const res = await t.http.delete(`${base}/voice_campaign_activate`).set(auth());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, subscriptions: { acw_start: { ensure_delivery: true, active: false } } });
    const last = await t.http.delete(`${base}/acw_start`).set(auth());
    expect(last.body).toEqual({ success: true, subscriptions: {} });
  });

  it('answers 404-03 for a subscription that does not exist', async () => {
    expectError(await t.http.delete(`${base}/acw_start`).set(auth()), 404, '404-03');
    expectError(await t.http.delete(`${base}/no_such_event`).set(auth()), 404, '404-03');
  });

  it('answers 400-04 for an event type that is not in the catalogue', async () => {
    const res = await t.http.put(`${base}/call_ended`).set(auth()).send({});
    expectError(res, 400, '400-04');
    expect(res.body.error.message).toMatch(/call_ended/);
  });

  it('subscribes to event types an admin adds, including awkward names', async () => {
    for (const name of ['call.recording.ready', '__proto__']) {
      await t.http.post('/admin/event_types').set('Authorization', ADMIN_KEY).send({ name }).expect(201);
      const res = await t.http.put(`${base}/${name}`).set(auth()).send({ ensure_delivery: true });
      expect(res.status).toBe(200);
      expect(Object.prototype.hasOwnProperty.call(res.body.subscriptions, name)).toBe(true);
      expect(res.body.subscriptions[name]).toEqual({ ensure_delivery: true, active: true });
    }
  });

  it('answers 404-02 on every subscription route when no webhook is configured', async () => {
    const bare = await t.fixtures.tenant();
    const path = `/application/${bare.applicationId}/webhook/subscription`;
    const headers = { Authorization: bare.key, 'Content-Type': 'application/json' };
    expectError(await t.http.get(path).set(headers), 404, '404-02');
    expectError(await t.http.put(`${path}/acw_start`).set(headers).send({}), 404, '404-02');
    expectError(await t.http.delete(`${path}/acw_start`).set(headers), 404, '404-02');
  });

  it.each([
    [{ ensure_delivery: 'yes' }, 'ensure_delivery'],
    [{ active: 1 }, 'active'],
    [{ active: null }, 'active'],
    [{ paused: true }, 'paused'],
  ])('refuses %j with 400-02 naming %s', async (body, field) => {
    const res = await t.http.put(`${base}/acw_start`).set(auth()).send(body);
    expectError(res, 400, '400-02');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toEqual([field]);
  });

  it('needs a JSON object body on PUT (send {} for the defaults)', async () => {
    expectError(await t.http.put(`${base}/acw_start`).set(auth()), 400, '400-01');
    expectError(await t.http.put(`${base}/acw_start`).set(auth()).send('[true]'), 400, '400-01');
  });
});
