import { createTestApp, TestApp } from './support/test-app';
import { detailFields, expectError } from './support/expect-error';
import { Tenant } from './support/fixtures';
import { sql } from '@herald/database/testing';

/** POST /application/{id}/events/batch (PRODUCT.md §5.1): all or nothing, in order, keys item by item. */
describe('batch publishing', () => {
  let t: TestApp;
  let tenant: Tenant;
  let app: string;
  const auth = () => ({ Authorization: tenant.key, 'Content-Type': 'application/json' });
  const batch = (body: unknown, as: Tenant = tenant) =>
    t.http
      .post(`/application/${as.applicationId}/events/batch`)
      .set({ Authorization: as.key })
      .send(body as object);
  const count = async (table: 'events' | 'deliveries') =>
    Number((await sql(t.db.url, `SELECT count(*) AS n FROM ${table} WHERE application_id = $1`, [tenant.applicationId]))[0].n);

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenantWithWebhook();
    app = `/application/${tenant.applicationId}`;
    await t.http.put(`${app}/webhook/subscription/acw_start`).set(auth()).send({ ensure_delivery: true }).expect(200);
    await t.http.put(`${app}/webhook/subscription/voice_campaign_activate`).set(auth()).send({ active: false }).expect(200);
  });
  afterAll(() => t.close());

  it('stores every event and its delivery and answers 202 with them in the order given', async () => {
    const res = await batch({
      events: [
        { event: 'acw_start', payload: { n: 1 } },
        { event: 'voice_campaign_activate', payload: { n: 2 } },
        { event: 'acw_start', payload: { n: 3, nested: { list: [1, 2] } } },
      ],
    });
    expect(res.status).toBe(202);
    expect(res.body.success).toBe(true);
    expect(res.body.data.map((item: { event: string }) => item.event)).toEqual(['acw_start', 'voice_campaign_activate', 'acw_start']);
    expect(res.body.data[0].deliveries).toEqual([expect.stringMatching(/^dlv_/)]);
    expect(res.body.data[1].deliveries).toEqual([]); // inactive subscription: the event is kept, nothing delivered
    const ids = res.body.data.map((item: { id: string }) => item.id);
    const stored = await sql(t.db.url, 'SELECT id, payload FROM events WHERE id = ANY($1::text[])', [ids]);
    expect(new Map(stored.map((row) => [row.id, JSON.parse(row.payload)]))).toEqual(
      new Map([
        [ids[0], { n: 1 }],
        [ids[1], { n: 2 }],
        [ids[2], { n: 3, nested: { list: [1, 2] } }],
      ]),
    );
    const deliveries = await sql(t.db.url, `SELECT event_id, status::text FROM deliveries WHERE event_id = ANY($1::text[])`, [ids]);
    expect(deliveries.map((row) => row.event_id).sort()).toEqual([ids[0], ids[2]].sort());
    expect(deliveries.every((row) => row.status === 'pending')).toBe(true);
  });

  it("keeps each payload exactly as sent, prototype names and control characters included, in Herald's own fields refused", async () => {
    const payload = '{"__proto__":{"x":1},"constructor":"c","toString":"t","text":"a\\u0001b"}';
    const res = await t.http.post(`${app}/events/batch`).set(auth()).send(`{"events":[{"event":"acw_start","payload":${payload}}]}`);
    expect(res.status).toBe(202);
    const [event] = await sql(t.db.url, 'SELECT payload FROM events WHERE id = $1', [res.body.data[0].id]);
    expect(event.payload).toBe(JSON.stringify(JSON.parse(payload)));

    const refused = await t.http
      .post(`${app}/events/batch`)
      .set(auth())
      .send('{"events":[{"event":"acw_start","payload":{},"__proto__":{}}]}');
    expectError(refused, 400, '400-02');
    expect(detailFields(refused)).toEqual(['events[0].__proto__']);
  });

  it('stores nothing when any item is invalid, and names each bad item', async () => {
    const before = { events: await count('events'), deliveries: await count('deliveries') };
    const good = { event: 'acw_start', payload: {} };

    const shape = await batch({ events: [good, good, { event: 'acw_start' }, good, { event: 7, payload: {} }] });
    expectError(shape, 400, '400-02');
    expect(detailFields(shape)).toEqual(['events[2].payload', 'events[4].event']);

    const unknown = await batch({ events: [good, { event: 'call_ended', payload: {} }, good, { event: 'nope', payload: {} }] });
    expectError(unknown, 400, '400-04');
    expect(detailFields(unknown)).toEqual(['events[1].event', 'events[3].event']);

    const operational = await batch({ events: [good, { event: 'webhook.disabled', payload: {} }] });
    expectError(operational, 400, '400-04');
    expect(detailFields(operational)).toEqual(['events[1].event']);

    const large = await batch({ events: [good, { event: 'acw_start', payload: { d: 'x'.repeat(256 * 1024) } }] });
    expectError(large, 413, '413-00');
    expect(detailFields(large)).toEqual(['events[1].payload']);

    expect({ events: await count('events'), deliveries: await count('deliveries') }).toEqual(before);
  });

  it.each([
    [{}, 'events'],
    [{ events: [] }, 'events'],
    [{ events: 'acw_start' }, 'events'],
    [{ events: [good(), 'text'] }, 'events[1]'],
    [{ events: [good()], extra: 1 }, 'extra'],
  ])('refuses %j with 400-02 naming %s', async (body, field) => {
    const res = await batch(body);
    expectError(res, 400, '400-02');
    expect(detailFields(res)[0]).toBe(field);
  });

  it('takes 1,000 events and refuses 1,001; a body over 5 MiB is 413-00 before it is read', async () => {
    const events = Array.from({ length: 1000 }, (_, i) => ({ event: 'acw_start', payload: { i } }));
    const res = await batch({ events });
    expect(res.status).toBe(202);
    expect(res.body.data).toHaveLength(1000);
    expect(res.body.data.map((item: { id: string }) => item.id)).toEqual([...res.body.data.map((item: { id: string }) => item.id)].sort());

    const tooMany = await batch({ events: [...events, good()] });
    expectError(tooMany, 400, '400-02');
    expect(detailFields(tooMany)).toEqual(['events']);

    const huge = await batch({
      events: Array.from({ length: 21 }, () => ({ event: 'acw_start', payload: { d: 'x'.repeat(250 * 1024) } })),
    });
    expectError(huge, 413, '413-00');
    // A single publish keeps its own, smaller limit.
    const single = await t.http
      .post(`${app}/events`)
      .set(auth())
      .send({ event: 'acw_start', payload: { d: 'x'.repeat(400 * 1024) } });
    expectError(single, 413, '413-00');
  });

  describe('idempotency keys, item by item', () => {
    it('answers an item whose key was used before with the first event, storing only the new ones', async () => {
      const first = await t.http
        .post(`${app}/events`)
        .set(auth())
        .send({ event: 'acw_start', payload: { call: 'b-1' }, idempotency_key: 'batch-1' })
        .expect(202);
      const before = await count('events');
      const res = await batch({
        events: [
          { event: 'acw_start', payload: { call: 'b-1' }, idempotency_key: 'batch-1' },
          { event: 'acw_start', payload: { call: 'b-2' }, idempotency_key: 'batch-2' },
          { event: 'acw_start', payload: { call: 'b-3' } },
        ],
      });
      expect(res.status).toBe(202);
      expect(res.body.data[0]).toEqual(first.body.data);
      expect(res.body.data[1].id).not.toBe(first.body.data.id);
      expect(await count('events')).toBe(before + 2);

      // The whole batch again: every keyed item answers as before, the unkeyed one is new.
      const again = await batch({
        events: [
          { event: 'acw_start', payload: { call: 'b-1' }, idempotency_key: 'batch-1' },
          { event: 'acw_start', payload: { call: 'b-2' }, idempotency_key: 'batch-2' },
        ],
      });
      expect(again.body.data).toEqual(res.body.data.slice(0, 2));
      expect(await count('events')).toBe(before + 2);
    });

    it('treats a key repeated inside one batch like a repeated publish: the same request answers the first, another is 400-07', async () => {
      const before = await count('events');
      const same = await batch({
        events: [
          { event: 'acw_start', payload: { call: 'r-1' }, idempotency_key: 'repeat-1' },
          { event: 'acw_start', payload: { call: 'r-1' }, idempotency_key: 'repeat-1' },
        ],
      });
      expect(same.status).toBe(202);
      expect(same.body.data[1]).toEqual(same.body.data[0]);
      expect(await count('events')).toBe(before + 1);

      const differs = await batch({
        events: [
          { event: 'acw_start', payload: { call: 'r-2' }, idempotency_key: 'repeat-2' },
          { event: 'acw_start', payload: { call: 'r-3' }, idempotency_key: 'repeat-2' },
        ],
      });
      expectError(differs, 400, '400-07');
      expect(detailFields(differs)).toEqual(['events[1].idempotency_key']);
      expect(await count('events')).toBe(before + 1);
    });

    it('fails the whole batch when a key was used before with another request, and takes none of its keys', async () => {
      await batch({ events: [{ event: 'acw_start', payload: { call: 'x-1' }, idempotency_key: 'taken-1' }] }).expect(202);
      const before = await count('events');
      const res = await batch({
        events: [
          { event: 'acw_start', payload: { call: 'x-2' }, idempotency_key: 'fresh-1' },
          { event: 'acw_start', payload: { call: 'other' }, idempotency_key: 'taken-1' },
        ],
      });
      expectError(res, 400, '400-07');
      expect(detailFields(res)).toEqual(['events[1].idempotency_key']);
      expect(await count('events')).toBe(before);
      // fresh-1 was not kept: it may now carry any request.
      expect((await batch({ events: [{ event: 'acw_start', payload: { call: 'y' }, idempotency_key: 'fresh-1' }] })).status).toBe(202);
    });
  });

  it("publishes only into the caller's own application", async () => {
    const other = await t.fixtures.tenantWithWebhook();
    const res = await t.http
      .post(`/application/${other.applicationId}/events/batch`)
      .set(auth())
      .send({ events: [good()] });
    expectError(res, 403, '403-03');
  });
});

function good(): { event: string; payload: object } {
  return { event: 'acw_start', payload: {} };
}
