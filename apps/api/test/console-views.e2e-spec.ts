import type { DeliveryStatus } from '@herald/core';
import { setDeliveryStatus, sql } from '@herald/database/testing';
import { createTestApp, TestApp } from './support/test-app';
import { expectError } from './support/expect-error';
import { Tenant } from './support/fixtures';

/**
 * What the console's screens read besides the resources themselves (issue 26): an application's
 * name, account and portal expiry (GET /application/{id}), the outcome of each delivery's latest
 * attempt and a time window in the log, the log's status counts, and an event by idempotency key.
 */
describe('the console views: application overview, delivery outcomes, time window, status counts', () => {
  let t: TestApp;
  let tenant: Tenant;
  const auth = (key: string) => ({ Authorization: key });
  const app = (path = '') => `/application/${tenant.applicationId}${path}`;
  const publish = async () =>
    (await t.http.post(app('/events')).set(auth(tenant.key)).send({ event: 'acw_start', payload: {} }).expect(202)).body.data
      .deliveries[0] as string;
  /** An attempt the way the worker records one, and the delivery's status and time as it leaves them. */
  const attempt = async (deliveryId: string, number: number, status: string, responseStatus: number | null, error: string | null) => {
    await sql(
      t.db.url,
      `INSERT INTO delivery_attempts (delivery_id, number, started_at, duration_ms, url, response_status, error)
       VALUES ($1, $2, now(), 12, 'https://example.com/hooks/herald', $3, $4)`,
      [deliveryId, number, responseStatus, error],
    );
    await setDeliveryStatus(t.db.url, deliveryId, status as DeliveryStatus, ['attempt_count = $3'], [number]);
  };

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenantWithWebhook();
    await t.http.put(app('/webhook/subscription/acw_start')).set(auth(tenant.key)).send({}).expect(200);
  });
  afterAll(() => t.close());

  it('names the application and its account; a portal token also learns when its link expires', async () => {
    const read = await t.http.get(app()).set(auth(tenant.key)).expect(200);
    expect(read.body).toEqual({
      success: true,
      data: {
        id: tenant.applicationId,
        name: `Application ${tenant.applicationId}`,
        account: { id: tenant.accountId, name: 'Test account' },
        portal_link_expires_at: null,
      },
    });
    const link = (await t.http.post(app('/portal_links')).set(auth(tenant.key)).send({}).expect(201)).body.data;
    const asPortal = await t.http.get(app()).set(auth(link.token)).expect(200);
    expect(asPortal.body.data.portal_link_expires_at).toBe(link.expires_at);

    // Another account's application, and one that does not exist, answer as every application route does.
    const other = await t.fixtures.tenant();
    expectError(await t.http.get(`/application/${other.applicationId}`).set(auth(tenant.key)), 403, '403-03');
    expectError(await t.http.get(`/application/${other.applicationId}`).set(auth(link.token)), 403, '403-03');
    expectError(await t.http.get('/application/999999').set(auth(tenant.key)), 404, '404-01');
  });

  it("gives each row of the log its latest attempt's outcome, narrows it to a time window, and counts it by status", async () => {
    const answered = await publish();
    const unreachable = await publish();
    const waiting = await publish();
    await attempt(answered, 1, 'pending', 502, null);
    await attempt(answered, 2, 'failed', 503, null);
    await attempt(unreachable, 1, 'failed', null, 'connection_refused');

    const log = await t.http.get(app('/deliveries')).set(auth(tenant.key)).expect(200);
    const byId = new Map(log.body.data.map((row: { id: string }) => [row.id, row]));
    expect(byId.get(answered)).toMatchObject({ status: 'failed', attempt_count: 2, last_attempt: { response_status: 503, error: null } });
    expect(byId.get(unreachable)).toMatchObject({ last_attempt: { response_status: null, error: 'connection_refused' } });
    expect(byId.get(waiting)).toMatchObject({ status: 'pending', last_attempt: null });

    // created_at of the three, moved apart by an hour each: the window is [since, until).
    const hour = 60 * 60 * 1000;
    const base = Date.parse('2026-11-20T10:00:00Z');
    for (const [i, id] of [answered, unreachable, waiting].entries()) {
      await sql(t.db.url, 'UPDATE deliveries SET created_at = $2 WHERE id = $1', [id, new Date(base + i * hour)]);
    }
    const window = `since=${new Date(base + hour).toISOString()}&until=${new Date(base + 2 * hour).toISOString()}`;
    const narrowed = await t.http
      .get(app(`/deliveries?${window}`))
      .set(auth(tenant.key))
      .expect(200);
    expect(narrowed.body.data.map((row: { id: string }) => row.id)).toEqual([unreachable]);

    const counts = await t.http.get(app('/deliveries/counts')).set(auth(tenant.key)).expect(200);
    expect(counts.body).toEqual({
      success: true,
      data: { pending: 1, sending: 0, paused: 0, succeeded: 0, failed: 2, cancelled: 0, total: 3 },
    });
    const since = await t.http.get(app(`/deliveries/counts?since=${new Date(base + hour).toISOString()}`)).set(auth(tenant.key));
    expect(since.body.data).toMatchObject({ pending: 1, failed: 1, total: 2 });
    const otherEvent = await t.http.get(app('/deliveries/counts?event=acw_end')).set(auth(tenant.key)).expect(200);
    expect(otherEvent.body.data.total).toBe(0);

    expectError(await t.http.get(app('/deliveries/counts?since=yesterday')).set(auth(tenant.key)), 400, '400-03');
    expectError(await t.http.get(app('/deliveries?until=soon')).set(auth(tenant.key)), 400, '400-03');
  });

  it('finds an event by the idempotency key it was published with', async () => {
    const keyed = (
      await t.http
        .post(app('/events'))
        .set(auth(tenant.key))
        .send({ event: 'acw_start', payload: { n: 1 }, idempotency_key: 'call-c-9001-acw' })
        .expect(202)
    ).body.data.id as string;
    await t.http
      .post(app('/events'))
      .set(auth(tenant.key))
      .send({ event: 'acw_start', payload: { n: 2 }, idempotency_key: 'another' })
      .expect(202);
    const found = await t.http.get(app('/events?idempotency_key=call-c-9001-acw')).set(auth(tenant.key)).expect(200);
    expect(found.body.data.map((event: { id: string }) => event.id)).toEqual([keyed]);
    expect(found.body.data[0].idempotency_key).toBe('call-c-9001-acw');
    const none = await t.http.get(app('/events?idempotency_key=never-used')).set(auth(tenant.key)).expect(200);
    expect(none.body).toEqual({ success: true, data: [], next_cursor: null });
    expectError(await t.http.get(app(`/events?idempotency_key=${'k'.repeat(256)}`)).set(auth(tenant.key)), 400, '400-03');
  });
});
