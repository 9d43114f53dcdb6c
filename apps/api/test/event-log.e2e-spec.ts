import { setDeliveryStatus, sql } from '@herald/database/testing';
import { RECOVER_BATCH_SIZE } from '@herald/database';
import { createTestApp, TestApp } from './support/test-app';
import { detailFields, expectError } from './support/expect-error';
import { Tenant } from './support/fixtures';

/** PRODUCT.md §8: events read back, replay, recover since a time, and the headers an attempt sent. */
describe('events read back, replay and recovery (PRODUCT.md §8)', () => {
  let t: TestApp;
  let tenant: Tenant;
  let app: string;
  const auth = (as: Tenant = tenant) => ({ Authorization: as.key });
  const publish = (body: object, as: Tenant = tenant) =>
    t.http.post(`/application/${as.applicationId}/events`).set(auth(as)).send(body).expect(202);
  const deliveryRow = async (id: string) =>
    (
      await sql<{ status: string; manual_attempt: boolean; next_attempt_at: Date | null; event_id: string }>(
        t.db.url,
        'SELECT status, manual_attempt, next_attempt_at, event_id FROM deliveries WHERE id = $1',
        [id],
      )
    )[0];

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenantWithWebhook();
    app = `/application/${tenant.applicationId}`;
    await t.http.put(`${app}/webhook/subscription/acw_start`).set(auth()).send({ ensure_delivery: true }).expect(200);
    await t.http.put(`${app}/webhook/subscription/voice_campaign_activate`).set(auth()).send({}).expect(200);
  });
  afterAll(() => t.close());

  describe('GET /application/{id}/events', () => {
    it('lists newest first with the deliveries of each, pages with the cursor and filters by event', async () => {
      const other = await t.fixtures.tenantWithWebhook();
      const published: { id: string; event: string; deliveries: string[] }[] = [];
      for (let i = 0; i < 5; i++) {
        const event = i % 2 === 0 ? 'acw_start' : 'voice_campaign_activate';
        published.push((await publish({ event, payload: { i } })).body.data);
      }
      await publish({ event: 'acw_start', payload: { other: true } }, other);

      const first = await t.http.get(`${app}/events?limit=2`).set(auth()).expect(200);
      expect(first.body).toEqual({
        success: true,
        data: [published[4], published[3]].map((event) => ({
          id: event.id,
          event: event.event,
          created_at: expect.any(String),
          idempotency_key: null,
          ordering_key: null,
          deliveries: event.deliveries,
        })),
        next_cursor: published[3].id,
      });
      expect(first.body.data[0].deliveries).toHaveLength(1);
      expect(first.body.data[0]).not.toHaveProperty('payload');

      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { data: { id: string }[]; next_cursor: string | null } } = await t.http
          .get(`${app}/events`)
          .query({ limit: 2, ...(cursor ? { cursor } : {}) })
          .set(auth())
          .expect(200);
        ids.push(...res.body.data.map((event) => event.id));
        cursor = res.body.next_cursor;
      } while (cursor);
      expect(ids.slice(0, 5)).toEqual(published.map((event) => event.id).reverse());

      const filtered = await t.http.get(`${app}/events?event=voice_campaign_activate`).set(auth()).expect(200);
      expect(filtered.body.data.map((event: { id: string }) => event.id).slice(0, 2)).toEqual([published[3].id, published[1].id]);
      expect(filtered.body.data.every((event: { event: string }) => event.event === 'voice_campaign_activate')).toBe(true);
    });

    it('shows the idempotency key an event was published with', async () => {
      const published = await publish({ event: 'acw_start', payload: {}, idempotency_key: 'call-77-acw' });
      const res = await t.http.get(`${app}/events?limit=1`).set(auth()).expect(200);
      expect(res.body.data[0]).toMatchObject({ id: published.body.data.id, idempotency_key: 'call-77-acw' });
    });

    it.each([
      ['an id of no shape', 'evt_nope'],
      ['a delivery id', 'dlv_01jd8x6q3m0000000000000000'],
      ['300 characters', 'x'.repeat(300)],
    ])('answers 400-03 for a cursor Herald did not issue: %s', async (_what, cursor) => {
      expectError(await t.http.get(`${app}/events`).query({ cursor }).set(auth()), 400, '400-03');
    });

    it('answers 400-03 for a bad limit and 403-03 for another account’s application', async () => {
      expectError(await t.http.get(`${app}/events?limit=0`).set(auth()), 400, '400-03');
      const stranger = await t.fixtures.tenant();
      expectError(await t.http.get(`${app}/events`).set(auth(stranger)), 403, '403-03');
    });
  });

  describe('GET /application/{id}/events/{event_id}', () => {
    it('reads the event back with its payload exactly as stored, keys in order', async () => {
      // Raw JSON: an object literal cannot hold an own `__proto__` key.
      const body =
        '{"event":"acw_start","payload":{"z":1,"a":{"__proto__":"kept","constructor":[1,2]},"ü nicode":"✓","big":12345678901234}}';
      const published = await t.http
        .post(`${app}/events`)
        .set({ ...auth(), 'Content-Type': 'application/json' })
        .send(body)
        .expect(202);
      const res = await t.http.get(`${app}/events/${published.body.data.id}`).set(auth()).expect(200);
      expect(res.body.data).toMatchObject({
        id: published.body.data.id,
        event: 'acw_start',
        deliveries: published.body.data.deliveries,
        idempotency_key: null,
      });
      const [stored] = await sql<{ payload: string }>(t.db.url, 'SELECT payload FROM events WHERE id = $1', [published.body.data.id]);
      expect(JSON.stringify(res.body.data.payload)).toBe(stored.payload);
      expect(Object.keys(res.body.data.payload)).toEqual(['z', 'a', 'ü nicode', 'big']);
      expect(Object.keys(res.body.data.payload.a)).toContain('__proto__');
    });

    it('answers 404-05 for an unknown, malformed or other application’s event', async () => {
      const other = await t.fixtures.tenantWithWebhook();
      const foreign = await publish({ event: 'acw_start', payload: {} }, other);
      for (const id of ['evt_01jd8x6q3k2m4n5p6r7s8t9v0w', 'nope', foreign.body.data.id]) {
        expectError(await t.http.get(`${app}/events/${id}`).set(auth()), 404, '404-05');
      }
    });
  });

  describe('POST /application/{id}/events/{event_id}/replay', () => {
    it('makes a new pending delivery of the event under today’s subscription', async () => {
      const published = (await publish({ event: 'acw_start', payload: { call: 'c-1' } })).body.data;
      const res = await t.http.post(`${app}/events/${published.id}/replay`).set(auth()).expect(202);
      expect(res.body).toEqual({ success: true, data: { id: published.id, event: 'acw_start', deliveries: [expect.any(String)] } });
      const replayed = res.body.data.deliveries[0];
      expect(replayed).not.toBe(published.deliveries[0]);
      expect(await deliveryRow(replayed)).toMatchObject({ status: 'pending', event_id: published.id, manual_attempt: false });

      const read = await t.http.get(`${app}/events/${published.id}`).set(auth()).expect(200);
      expect(read.body.data.deliveries).toEqual([published.deliveries[0], replayed]);
    });

    it('makes none while the subscription is inactive, and one again once it is active', async () => {
      const published = (await publish({ event: 'voice_campaign_activate', payload: {} })).body.data;
      await t.http.put(`${app}/webhook/subscription/voice_campaign_activate`).set(auth()).send({ active: false }).expect(200);
      try {
        const res = await t.http.post(`${app}/events/${published.id}/replay`).set(auth()).expect(202);
        expect(res.body.data).toEqual({ id: published.id, event: 'voice_campaign_activate', deliveries: [] });
      } finally {
        await t.http.put(`${app}/webhook/subscription/voice_campaign_activate`).set(auth()).send({ active: true }).expect(200);
      }
      const again = await t.http.post(`${app}/events/${published.id}/replay`).set(auth()).expect(202);
      expect(again.body.data.deliveries).toHaveLength(1);
    });

    it('replays a test ping without a subscription to it, and nothing once the webhook is gone', async () => {
      const own = await t.fixtures.tenantWithWebhook();
      const ping = await t.http.post(`/application/${own.applicationId}/webhook/test`).set(auth(own)).expect(202);
      const replay = () => t.http.post(`/application/${own.applicationId}/events/${ping.body.data.id}/replay`).set(auth(own)).expect(202);
      expect((await replay()).body.data.deliveries).toHaveLength(1);
      await t.http.delete(`/application/${own.applicationId}/webhook`).set(auth(own)).expect(200);
      expect((await replay()).body.data).toEqual({ id: ping.body.data.id, event: 'webhook.test', deliveries: [] });
    });

    it('answers 404-05 for an event it does not have, and 403-03 to another account', async () => {
      expectError(await t.http.post(`${app}/events/evt_01jd8x6q3k2m4n5p6r7s8t9v0w/replay`).set(auth()), 404, '404-05');
      expectError(await t.http.post(`${app}/events/${'e'.repeat(90)}/replay`).set(auth()), 404, '404-05');
      const published = (await publish({ event: 'acw_start', payload: {} })).body.data;
      const stranger = await t.fixtures.tenant();
      expectError(await t.http.post(`${app}/events/${published.id}/replay`).set(auth(stranger)), 403, '403-03');
    });
  });

  describe('POST /application/{id}/deliveries/recover', () => {
    /** A tenant whose application has `count` deliveries, all failed, created at `createdAt` (and 1 ms apart). */
    async function failedDeliveries(owner: Tenant, count: number, createdAt: Date, event = 'acw_start'): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        ids.push((await publish({ event, payload: { i } }, owner)).body.data.deliveries[0]);
      }
      await setDeliveryStatus(
        t.db.url,
        ids,
        'failed',
        ['next_attempt_at = NULL', `created_at = $3::timestamptz + (array_position($1::text[], id) - 1) * interval '1 millisecond'`],
        [createdAt],
      );
      return ids;
    }
    const recover = (owner: Tenant, body: object) =>
      t.http.post(`/application/${owner.applicationId}/deliveries/recover`).set(auth(owner)).send(body);
    async function ownTenant(): Promise<Tenant> {
      const owner = await t.fixtures.tenantWithWebhook();
      for (const event of ['acw_start', 'voice_campaign_activate']) {
        await t.http.put(`/application/${owner.applicationId}/webhook/subscription/${event}`).set(auth(owner)).send({}).expect(200);
      }
      return owner;
    }

    it('gives every failed delivery created in [since, until) one attempt now, and no others', async () => {
      const owner = await ownTenant();
      const before = await failedDeliveries(owner, 2, new Date('2026-01-01T09:00:00Z'));
      const inside = await failedDeliveries(owner, 3, new Date('2026-01-01T10:00:00Z'));
      const after = await failedDeliveries(owner, 2, new Date('2026-01-01T11:00:00Z'));
      const otherType = await failedDeliveries(owner, 1, new Date('2026-01-01T10:30:00Z'), 'voice_campaign_activate');
      const succeeded = await failedDeliveries(owner, 1, new Date('2026-01-01T10:30:00Z'));
      await setDeliveryStatus(t.db.url, succeeded[0], 'succeeded');
      const stranger = await ownTenant();
      const foreign = await failedDeliveries(stranger, 1, new Date('2026-01-01T10:00:00Z'));

      const res = await recover(owner, { since: '2026-01-01T10:00:00Z', until: '2026-01-01T11:00:00Z', event: 'acw_start' });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ success: true, data: { requeued: 3 } });
      for (const id of inside)
        expect(await deliveryRow(id)).toMatchObject({ status: 'pending', manual_attempt: true, next_attempt_at: expect.any(Date) });
      for (const id of [...before, ...after, ...otherType, ...foreign]) expect((await deliveryRow(id)).status).toBe('failed');
      expect((await deliveryRow(succeeded[0])).status).toBe('succeeded');

      // Without an event filter and `until`, everything failed from `since` to now.
      const all = await recover(owner, { since: '2026-01-01T10:00:00+00:00' });
      expect(all.body.data).toEqual({ requeued: 3 });
      for (const id of [...otherType, ...after]) expect((await deliveryRow(id)).status).toBe('pending');
      expect((await recover(owner, { since: '2026-01-01' })).body.data).toEqual({ requeued: 2 });
    });

    it(`works past one batch (${RECOVER_BATCH_SIZE}), and two at once never requeue one delivery twice`, async () => {
      const owner = await ownTenant();
      const count = RECOVER_BATCH_SIZE * 2 + 37;
      // Built in SQL: publishing 2,037 events through the api would only slow the test down.
      const template = await failedDeliveries(owner, 1, new Date('2026-02-01T00:00:00Z'));
      const [{ event_id: eventId }] = await sql<{ event_id: string }>(t.db.url, 'SELECT event_id FROM deliveries WHERE id = $1', [
        template[0],
      ]);
      await sql(
        t.db.url,
        `INSERT INTO deliveries (id, event_id, application_id, event_type, status, created_at, updated_at)
         SELECT 'dlv_bulk' || lpad(n::text, 6, '0'), $1, $2, 'acw_start', 'failed',
                '2026-02-01T00:00:00Z'::timestamptz + n * interval '1 second', now()
           FROM generate_series(1, $3::int) AS n`,
        [eventId, owner.applicationId, count - 1],
      );

      const [first, second] = await Promise.all([
        recover(owner, { since: '2026-02-01T00:00:00Z' }),
        recover(owner, { since: '2026-02-01T00:00:00Z' }),
      ]);
      expect([first.status, second.status]).toEqual([202, 202]);
      expect(first.body.data.requeued + second.body.data.requeued).toBe(count);
      const [state] = await sql<{ pending: string; failed: string }>(
        t.db.url,
        `SELECT count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'failed') AS failed
           FROM deliveries WHERE application_id = $1`,
        [owner.applicationId],
      );
      expect(state).toEqual({ pending: String(count), failed: '0' });
      expect((await recover(owner, { since: '2026-02-01T00:00:00Z' })).body.data).toEqual({ requeued: 0 });
    });

    it.each([
      [{}, 'since'],
      [{ since: 'yesterday' }, 'since'],
      [{ since: '2026-13-01T00:00:00Z' }, 'since'],
      [{ since: 1700000000 }, 'since'],
      [{ since: '2026-01-01T00:00:00Z', until: 'later' }, 'until'],
      [{ since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' }, 'until'],
      [{ since: '2026-01-01T00:00:00Z', until: '2026-01-01T00:00:00Z' }, 'until'],
      [{ since: '2026-01-01T00:00:00Z', event: '' }, 'event'],
      [{ since: '2026-01-01T00:00:00Z', status: 'failed' }, 'status'],
    ])('answers 400-02 naming the field for %j', async (body, field) => {
      const res = await recover(tenant, body);
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toContain(field);
    });
  });
});
