import { THROTTLE_HORIZON_MS } from '@herald/database';
import { sql } from '@herald/database/testing';
import { createTestApp, TestApp } from './support/test-app';
import { detailFields, expectError } from './support/expect-error';
import { Tenant, VALID_WEBHOOK } from './support/fixtures';

/** PRODUCT.md §10: PUT/GET /application/{id}/webhook/throttle. The worker side is apps/worker/test/throttle.e2e-spec.ts. */
describe('webhook throttle (PUT/GET /application/{id}/webhook/throttle)', () => {
  let t: TestApp;
  let tenant: Tenant;
  const path = (as: Tenant) => `/application/${as.applicationId}/webhook/throttle`;
  const put = (body: unknown, as = tenant) =>
    t.http
      .put(path(as))
      .set('Authorization', as.key)
      .send(body as object);
  const get = (as = tenant) => t.http.get(path(as)).set('Authorization', as.key);

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenantWithWebhook();
  });
  afterAll(() => t.close());

  it('reads null until a throttle is set, then what was set; null removes it', async () => {
    expect((await get().expect(200)).body).toEqual({ success: true, data: { per_second: null, max_in_flight: null } });

    expect((await put({ per_second: 20 }).expect(200)).body).toEqual({ success: true, data: { per_second: 20, max_in_flight: null } });
    expect((await get().expect(200)).body).toEqual({ success: true, data: { per_second: 20, max_in_flight: null } });
    const [stored] = await sql<{ throttle_per_second: number }>(
      t.db.url,
      'SELECT throttle_per_second FROM webhooks WHERE application_id = $1',
      [tenant.applicationId],
    );
    expect(stored.throttle_per_second).toBe(20);

    expect((await put({ per_second: 10_000 }).expect(200)).body.data).toEqual({ per_second: 10_000, max_in_flight: null });
    expect((await put({ per_second: 1 }).expect(200)).body.data).toEqual({ per_second: 1, max_in_flight: null });
    expect((await put({ per_second: null }).expect(200)).body).toEqual({ success: true, data: { per_second: null, max_in_flight: null } });
    expect((await get().expect(200)).body.data).toEqual({ per_second: null, max_in_flight: null });
  });

  it('sets max_in_flight beside per_second (PRODUCT.md §17): left out keeps it, null gives it back to the default', async () => {
    const subject = await t.fixtures.tenantWithWebhook();
    expect((await put({ per_second: null, max_in_flight: 4 }, subject).expect(200)).body.data).toEqual({
      per_second: null,
      max_in_flight: 4,
    });
    expect((await put({ per_second: 30 }, subject).expect(200)).body.data).toEqual({ per_second: 30, max_in_flight: 4 });
    expect((await get(subject).expect(200)).body.data).toEqual({ per_second: 30, max_in_flight: 4 });
    const [stored] = await sql<{ max_in_flight: number }>(t.db.url, 'SELECT max_in_flight FROM webhooks WHERE application_id = $1', [
      subject.applicationId,
    ]);
    expect(stored.max_in_flight).toBe(4);
    expect((await put({ per_second: 30, max_in_flight: 1_000 }, subject).expect(200)).body.data.max_in_flight).toBe(1_000);
    expect((await put({ per_second: 30, max_in_flight: null }, subject).expect(200)).body.data).toEqual({
      per_second: 30,
      max_in_flight: null,
    });
  });

  it.each([
    ['0', 0, 'max_in_flight must not be less than 1'],
    ['1001', 1_001, 'max_in_flight must not be greater than 1000'],
    ['a fraction', 1.5, 'max_in_flight must be an integer (got the fraction 1.5)'],
    ['a string', '8', 'max_in_flight must be an integer (got a string)'],
  ])('400-02 naming max_in_flight for %s, changing nothing', async (_, value, message) => {
    const subject = await t.fixtures.tenantWithWebhook();
    await put({ per_second: 7, max_in_flight: 3 }, subject).expect(200);
    const res = await put({ per_second: 8, max_in_flight: value }, subject);
    expectError(res, 400, '400-02');
    expect(res.body.error.details).toEqual([{ field: 'max_in_flight', message }]);
    expect((await get(subject)).body.data).toEqual({ per_second: 7, max_in_flight: 3 });
  });

  it("leaves the seed's webhook bodies as they are, and a PUT of the configuration keeps the throttle", async () => {
    await put({ per_second: 50 }).expect(200);
    const configured = await t.http
      .put(`/application/${tenant.applicationId}/webhook`)
      .set('Authorization', tenant.key)
      .send(VALID_WEBHOOK);
    expect(configured.status).toBe(200);
    expect(configured.body).toEqual({ success: true, data: VALID_WEBHOOK });
    const read = await t.http.get(`/application/${tenant.applicationId}/webhook`).set('Authorization', tenant.key).expect(200);
    expect(read.body).toEqual({ success: true, data: VALID_WEBHOOK });
    expect((await get().expect(200)).body.data).toEqual({ per_second: 50, max_in_flight: null });
  });

  it.each([
    ['0', 0, 'per_second must not be less than 1'],
    ['10001', 10_001, 'per_second must not be greater than 10000'],
    ['a fraction', 2.5, 'per_second must be an integer (got the fraction 2.5)'],
    ['a string', '20', 'per_second must be an integer (got a string)'],
    ['a boolean', true, 'per_second must be an integer (got a boolean)'],
    ['an object', { value: 20 }, 'per_second must be an integer (got an object)'],
  ])('400-02 naming per_second for %s, changing nothing', async (_, value, message) => {
    await put({ per_second: 7 }).expect(200);
    const res = await put({ per_second: value });
    expectError(res, 400, '400-02');
    expect(res.body.error.details).toEqual([{ field: 'per_second', message }]);
    expect((await get()).body.data).toEqual({ per_second: 7, max_in_flight: null });
  });

  it('400-02 when per_second is missing (null, not absence, removes a throttle) or another field is sent', async () => {
    const missing = await put({});
    expectError(missing, 400, '400-02');
    expect(missing.body.error.details).toEqual([
      { field: 'per_second', message: 'per_second is required: an integer from 1 to 10000, or null to remove the throttle' },
    ]);
    const unknown = await put({ per_second: 5, burst: 10 });
    expectError(unknown, 400, '400-02');
    expect(detailFields(unknown)).toEqual(['burst']);
  });

  it('400-01 for a body that is not a JSON object', async () => {
    expectError(
      await t.http.put(path(tenant)).set('Authorization', tenant.key).set('Content-Type', 'application/json').send('[20]'),
      400,
      '400-01',
    );
  });

  it('404-02 without a webhook, for both; and the throttle goes with a deleted webhook', async () => {
    const bare = await t.fixtures.tenant();
    expectError(await get(bare), 404, '404-02');
    expectError(await put({ per_second: 5 }, bare), 404, '404-02');

    const other = await t.fixtures.tenantWithWebhook();
    await put({ per_second: 5 }, other).expect(200);
    await sql(t.db.url, `INSERT INTO webhook_throttles (application_id, next_slot_at) VALUES ($1, now())`, [other.applicationId]);
    await t.http.delete(`/application/${other.applicationId}/webhook`).set('Authorization', other.key).expect(200);
    expectError(await get(other), 404, '404-02');
    expect(await sql(t.db.url, 'SELECT 1 FROM webhook_throttles WHERE application_id = $1', [other.applicationId])).toEqual([]);
    await t.http.put(`/application/${other.applicationId}/webhook`).set('Authorization', other.key).send(VALID_WEBHOOK).expect(200);
    expect((await get(other).expect(200)).body.data).toEqual({ per_second: null, max_in_flight: null });
  });

  it('a change makes deliveries waiting for a slot of the old rate due again, oldest first, and brings the next slot back near', async () => {
    const subject = await t.fixtures.tenantWithWebhook();
    await put({ per_second: 1 }, subject).expect(200);
    await t.http
      .put(`/application/${subject.applicationId}/webhook/subscription/acw_start`)
      .set('Authorization', subject.key)
      .send({})
      .expect(200);
    const published: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.http
        .post(`/application/${subject.applicationId}/events`)
        .set('Authorization', subject.key)
        .send({ event: 'acw_start', payload: { i } })
        .expect(202);
      published.push(res.body.data.deliveries[0]);
    }
    // As the claim leaves them (no worker runs here): slots reserved far ahead at the old rate,
    // and the webhook's next free slot after them.
    await sql(
      t.db.url,
      `UPDATE delivery_queue
          SET due_at = now() + interval '1 hour', throttle_slot_at = now() + interval '1 hour', slot_reserved_at = now() - interval '1 second'
        WHERE delivery_id = ANY($1)`,
      [published],
    );
    await sql(t.db.url, `INSERT INTO webhook_throttles (application_id, next_slot_at) VALUES ($1, now() + interval '1 hour')`, [
      subject.applicationId,
    ]);

    await put({ per_second: 100 }, subject).expect(200);

    const rows = await sql<{ id: string; due: boolean; throttle_slot_at: Date | null }>(
      t.db.url,
      `SELECT d.id, q.due_at = e.created_at AS due, q.throttle_slot_at
         FROM deliveries d JOIN events e ON e.id = d.event_id JOIN delivery_queue q ON q.delivery_id = d.id
        WHERE d.id = ANY($1) ORDER BY d.id`,
      [published],
    );
    expect(rows).toEqual([...published].sort().map((id) => ({ id, due: true, throttle_slot_at: null })));
    // The next slot comes back to within the hold horizon: no gap where the old reservations were.
    const [{ ahead_ms }] = await sql<{ ahead_ms: number }>(
      t.db.url,
      `SELECT extract(epoch FROM next_slot_at - clock_timestamp()) * 1000 AS ahead_ms FROM webhook_throttles WHERE application_id = $1`,
      [subject.applicationId],
    );
    expect(Number(ahead_ms)).toBeLessThanOrEqual(THROTTLE_HORIZON_MS);
  });
});
