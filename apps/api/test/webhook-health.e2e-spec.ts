import { UlidIdGenerator } from '@herald/core';
import { WebhookHealthRepository } from '@herald/database';
import { sql, testAudit } from '@herald/database/testing';
import { createTestApp, TestApp } from './support/test-app';
import { expectError } from './support/expect-error';
import { Tenant, VALID_WEBHOOK } from './support/fixtures';

const HOUR_MS = 60 * 60 * 1000;
const ids = new UlidIdGenerator();
const noticeIds = () => ({ eventId: ids.next('evt'), deliveryId: ids.next('dlv') });

/** PRODUCT.md §10: endpoint state; disabling pauses deliveries (none dropped), enabling resumes them. */
describe('endpoint health: status, disable, enable (PRODUCT.md §10)', () => {
  let t: TestApp;
  const auth = (as: Tenant) => ({ Authorization: as.key });
  const route = (as: Tenant, path: string) => `/application/${as.applicationId}/webhook/${path}`;
  const statuses = async (ids: string[]) =>
    (await sql<{ id: string; status: string }>(t.db.url, 'SELECT id, status FROM deliveries WHERE id = ANY($1) ORDER BY id', [ids])).map(
      (row) => row.status,
    );

  async function subscribedTenant(): Promise<Tenant> {
    const tenant = await t.fixtures.tenantWithWebhook();
    await t.http.put(route(tenant, 'subscription/acw_start')).set(auth(tenant)).send({}).expect(200);
    return tenant;
  }
  const publish = async (as: Tenant, payload: object = {}) =>
    (await t.http.post(`/application/${as.applicationId}/events`).set(auth(as)).send({ event: 'acw_start', payload }).expect(202)).body.data
      .deliveries[0] as string;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('shows a new webhook as active with no failures', async () => {
    const tenant = await t.fixtures.tenantWithWebhook();
    const res = await t.http.get(route(tenant, 'status')).set(auth(tenant)).expect(200);
    expect(res.body).toEqual({
      success: true,
      data: {
        state: 'active',
        disabled_at: null,
        disabled_reason: null,
        failing_since: null,
        last_success_at: null,
        consecutive_failures: 0,
        will_disable_at: null,
      },
    });
  });

  it('says, while a webhook is failing, when it will be disabled unless an attempt succeeds (PRODUCT.md §16)', async () => {
    const tenant = await t.fixtures.tenantWithWebhook();
    const failingSince = new Date('2026-11-20T08:30:00.000Z');
    await sql(t.db.url, 'UPDATE webhooks SET failing_since = $2, consecutive_failures = 4 WHERE application_id = $1', [
      tenant.applicationId,
      failingSince,
    ]);
    const failing = (await t.http.get(route(tenant, 'status')).set(auth(tenant)).expect(200)).body.data;
    // HERALD_DISABLE_AFTER_HOURS is 120 by default.
    expect(failing).toMatchObject({ failing_since: failingSince.toISOString(), will_disable_at: '2026-11-25T08:30:00.000Z' });

    await t.http.post(route(tenant, 'disable')).set(auth(tenant)).expect(200);
    expect((await t.http.get(route(tenant, 'status')).set(auth(tenant))).body.data.will_disable_at).toBeNull();
  });

  it('never gives will_disable_at when auto-disable is off', async () => {
    const off = await createTestApp({ env: { HERALD_DISABLE_AFTER_HOURS: '0' } });
    try {
      const tenant = await off.fixtures.tenantWithWebhook();
      await sql(off.db.url, 'UPDATE webhooks SET failing_since = now(), consecutive_failures = 40 WHERE application_id = $1', [
        tenant.applicationId,
      ]);
      const status = (await off.http.get(route(tenant, 'status')).set(auth(tenant)).expect(200)).body.data;
      expect(status).toMatchObject({ consecutive_failures: 40, will_disable_at: null });
    } finally {
      await off.close();
    }
  });

  it('disabling pauses pending deliveries and those of new events; enabling resumes them oldest first', async () => {
    const tenant = await subscribedTenant();
    const before = [await publish(tenant, { n: 1 }), await publish(tenant, { n: 2 })];

    const disabled = await t.http.post(route(tenant, 'disable')).set(auth(tenant)).expect(200);
    expect(disabled.body.data).toMatchObject({ state: 'disabled', disabled_reason: 'manual', disabled_at: expect.any(String) });
    expect(await statuses(before)).toEqual(['paused', 'paused']);

    const during = await publish(tenant, { n: 3 });
    expect(await statuses([during])).toEqual(['paused']);
    const listed = await t.http.get(`/application/${tenant.applicationId}/deliveries?status=paused`).set(auth(tenant)).expect(200);
    expect(listed.body.data.map((d: { id: string }) => d.id)).toEqual([during, ...before].sort().reverse());
    expectError(await t.http.post(`/application/${tenant.applicationId}/deliveries/${during}/retry`).set(auth(tenant)), 409, '409-00');

    // Disabling again changes nothing; a PUT of the configuration does not enable it, and its body is the seed's.
    const again = await t.http.post(route(tenant, 'disable')).set(auth(tenant)).expect(200);
    expect(again.body.data.disabled_at).toBe(disabled.body.data.disabled_at);
    const put = await t.http.put(`/application/${tenant.applicationId}/webhook`).set(auth(tenant)).send(VALID_WEBHOOK).expect(200);
    expect(Object.keys(put.body)).not.toContain('state');
    expect(JSON.stringify(put.body)).not.toMatch(/state|disabled/);
    expect((await t.http.get(route(tenant, 'status')).set(auth(tenant))).body.data.state).toBe('disabled');

    await sql(t.db.url, 'UPDATE webhooks SET failing_since = now(), consecutive_failures = 7 WHERE application_id = $1', [
      tenant.applicationId,
    ]);
    const enabled = await t.http.post(route(tenant, 'enable')).set(auth(tenant)).expect(200);
    expect(enabled.body.data).toEqual({
      state: 'active',
      disabled_at: null,
      disabled_reason: null,
      failing_since: null,
      last_success_at: null,
      consecutive_failures: 0,
      will_disable_at: null,
    });
    const resumed = await sql<{ id: string; status: string; due: boolean }>(
      t.db.url,
      'SELECT id, status, next_attempt_at = created_at AS due FROM deliveries WHERE id = ANY($1) ORDER BY next_attempt_at, id',
      [[...before, during]],
    );
    // All due at their creation time: the claim (ordered by next_attempt_at) takes them oldest first.
    expect(resumed).toEqual([...before, during].map((id) => ({ id, status: 'pending', due: true })));
    expect(await statuses([await publish(tenant)])).toEqual(['pending']);
  });

  it('cancels paused deliveries with their subscription, like pending ones', async () => {
    const tenant = await subscribedTenant();
    await t.http.post(route(tenant, 'disable')).set(auth(tenant)).expect(200);
    const paused = await publish(tenant);
    await t.http.delete(route(tenant, 'subscription/acw_start')).set(auth(tenant)).expect(200);
    expect(await statuses([paused])).toEqual(['cancelled']);
  });

  it('auto-disables after the period of nothing but failures with at least 10 attempts, and pauses what waits', async () => {
    const health = t.app.get(WebhookHealthRepository);
    const now = new Date('2026-06-01T12:00:00Z');
    const threshold = new Date(now.getTime() - 120 * HOUR_MS);
    const failingFor = async (as: Tenant, hours: number, failures: number) =>
      sql(t.db.url, 'UPDATE webhooks SET failing_since = $2, consecutive_failures = $3 WHERE application_id = $1', [
        as.applicationId,
        new Date(now.getTime() - hours * HOUR_MS),
        failures,
      ]);
    const justUnder = await subscribedTenant();
    await failingFor(justUnder, 119.9, 50);
    const tooFewAttempts = await subscribedTenant();
    await failingFor(tooFewAttempts, 200, 9);
    const failing = await subscribedTenant();
    await failingFor(failing, 120, 10);
    const waiting = await publish(failing);

    const disabled = await health.disableFailing(now, threshold, 10, noticeIds, testAudit);

    expect(disabled).toEqual([failing.applicationId]);
    expect(await statuses([waiting])).toEqual(['paused']);
    const status = (await t.http.get(route(failing, 'status')).set(auth(failing))).body.data;
    expect(status).toMatchObject({
      state: 'disabled',
      disabled_reason: 'failing',
      disabled_at: now.toISOString(),
      consecutive_failures: 10,
    });
    for (const kept of [justUnder, tooFewAttempts]) {
      expect((await t.http.get(route(kept, 'status')).set(auth(kept))).body.data.state).toBe('active');
    }
    // Checking again disables nothing more.
    expect(await health.disableFailing(now, threshold, 10, noticeIds, testAudit)).toEqual([]);
  });

  it('answers 404-02 without a webhook and 403-03 to another account', async () => {
    const bare = await t.fixtures.tenant();
    for (const [method, path] of [
      ['get', 'status'],
      ['post', 'disable'],
      ['post', 'enable'],
    ] as const) {
      expectError(await t.http[method](route(bare, path)).set(auth(bare)), 404, '404-02');
    }
    const stranger = await t.fixtures.tenant();
    const owner = await t.fixtures.tenantWithWebhook();
    expectError(await t.http.post(route(owner, 'disable')).set(auth(stranger)), 403, '403-03');
    expect((await t.http.get(route(owner, 'status')).set(auth(owner))).body.data.state).toBe('active');
  });
});
