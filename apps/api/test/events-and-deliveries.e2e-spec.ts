import { createTestApp, TestApp } from './support/test-app';
import { detailFields, expectError } from './support/expect-error';
import { Tenant } from './support/fixtures';
import { setDeliveryStatus, sql } from '@herald/database/testing';
import { ChannelListener, DELIVERY_CHANNEL } from '@herald/database';
import type { DeliveryStatus } from '@herald/core';

describe('publishing events and the delivery log (PRODUCT.md §5.1, §5.5)', () => {
  let t: TestApp;
  let tenant: Tenant;
  let app: string;
  const auth = () => ({ Authorization: tenant.key, 'Content-Type': 'application/json' });
  const publish = (body: object, as: Tenant = tenant) =>
    t.http.post(`/application/${as.applicationId}/events`).set({ Authorization: as.key }).send(body);
  const setStatus = (id: string, status: DeliveryStatus) => setDeliveryStatus(t.db.url, id, status);

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenantWithWebhook();
    app = `/application/${tenant.applicationId}`;
    await t.http.put(`${app}/webhook/subscription/acw_start`).set(auth()).send({ ensure_delivery: true }).expect(200);
    await t.http.put(`${app}/webhook/subscription/voice_campaign_activate`).set(auth()).send({ active: false }).expect(200);
  });
  afterAll(() => t.close());

  describe('POST /application/{id}/events', () => {
    it('answers 202 after storing the event and its pending delivery', async () => {
      const res = await publish({ event: 'acw_start', payload: { agent: 'a-17', nested: { list: [1, 2] } } });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        success: true,
        data: { id: expect.stringMatching(/^evt_[0-9a-z]{26}$/), event: 'acw_start', deliveries: [expect.stringMatching(/^dlv_/)] },
      });
      const [event] = await sql(t.db.url, 'SELECT * FROM events WHERE id = $1', [res.body.data.id]);
      expect(JSON.parse(event.payload)).toEqual({ agent: 'a-17', nested: { list: [1, 2] } });
      const [delivery] = await sql(t.db.url, 'SELECT status::text, next_attempt_at FROM deliveries WHERE id = $1', [
        res.body.data.deliveries[0],
      ]);
      expect(delivery.status).toBe('pending');
      expect(delivery.next_attempt_at).not.toBeNull();
    });

    it('wakes the workers (NOTIFY on their channel) with every publish that makes a delivery, as it commits', async () => {
      const heard: number[] = [];
      const listener = new ChannelListener(t.db.url, DELIVERY_CHANNEL, { onNotification: () => heard.push(Date.now()) });
      await listener.start();
      try {
        for (let i = 0; i < 3; i++) {
          const before = heard.length;
          expect((await publish({ event: 'acw_start', payload: { i } })).status).toBe(202);
          const deadline = Date.now() + 2_000;
          while (heard.length === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
          expect(heard.length).toBeGreaterThan(before);
        }
      } finally {
        await listener.stop();
      }
    });

    it('creates no delivery for an inactive subscription, no subscription, or no webhook — but keeps the event', async () => {
      expect((await publish({ event: 'voice_campaign_activate', payload: {} })).body.data.deliveries).toEqual([]);
      expect((await publish({ event: 'webhook.test', payload: {} })).body.data.deliveries).toEqual([]);
      const bare = await t.fixtures.tenant();
      const res = await publish({ event: 'acw_start', payload: {} }, bare);
      expect(res.status).toBe(202);
      expect(res.body.data.deliveries).toEqual([]);
      expect(await sql(t.db.url, 'SELECT id FROM events WHERE id = $1', [res.body.data.id])).toHaveLength(1);
    });

    it('answers 400-04 for an event type that is not in the catalogue', async () => {
      const res = await publish({ event: 'call_ended', payload: {} });
      expectError(res, 400, '400-04');
      expect(detailFields(res)).toEqual(['event']);
    });

    it.each([
      [{ payload: {} }, 'event'],
      [{ event: 'acw_start' }, 'payload'],
      [{ event: 'acw_start', payload: [1, 2] }, 'payload'],
      [{ event: 'acw_start', payload: 'text' }, 'payload'],
      [{ event: 'acw_start', payload: null }, 'payload'],
      [{ event: 'acw_start', payload: {}, idempotency_key: '' }, 'idempotency_key'],
      [{ event: 'acw_start', payload: {}, idempotency_key: 'k'.repeat(256) }, 'idempotency_key'],
      [{ event: 'acw_start', payload: {}, priority: 'high' }, 'priority'],
      [{ event: 'acw_start', payload: {}, ordering_key: '' }, 'ordering_key'],
      [{ event: 'acw_start', payload: {}, ordering_key: 'k'.repeat(256) }, 'ordering_key'],
      [{ event: 'acw_start', payload: {}, ordering_key: 'call\n9001' }, 'ordering_key'],
      [{ event: 'acw_start', payload: {}, ordering_key: 42 }, 'ordering_key'],
    ])('refuses %j with 400-02 naming %s', async (body, field) => {
      const res = await publish(body);
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toEqual([field]);
    });

    it('accepts a 255-character idempotency key and a 256 KiB payload, and answers 413-00 one byte past', async () => {
      expect((await publish({ event: 'acw_start', payload: {}, idempotency_key: 'k'.repeat(255) })).status).toBe(202);
      const payloadOf = (bytes: number) => ({ d: 'x'.repeat(bytes - '{"d":""}'.length) });
      expect(Buffer.byteLength(JSON.stringify(payloadOf(256 * 1024)))).toBe(256 * 1024);
      expect((await publish({ event: 'acw_start', payload: payloadOf(256 * 1024) })).status).toBe(202);
      const res = await publish({ event: 'acw_start', payload: payloadOf(256 * 1024 + 1) });
      expectError(res, 413, '413-00');
      expect(detailFields(res)).toEqual(['payload']);
      expectError(await publish({ event: 'acw_start', payload: payloadOf(400 * 1024) }), 413, '413-00');
    });
  });

  describe('ordering keys (PRODUCT.md §13)', () => {
    it('stores the key with the event, returns it from the events routes, and names the item in a batch', async () => {
      const published = await publish({ event: 'acw_start', payload: {}, ordering_key: 'call-c-9001 ✓' }).expect(202);
      const read = await t.http.get(`${app}/events/${published.body.data.id}`).set(auth()).expect(200);
      expect(read.body.data.ordering_key).toBe('call-c-9001 ✓');
      const [row] = await sql(t.db.url, 'SELECT ordering_key FROM delivery_queue WHERE delivery_id = $1', [
        published.body.data.deliveries[0],
      ]);
      expect(row.ordering_key).toBe('call-c-9001 ✓');

      const batch = await t.http
        .post(`${app}/events/batch`)
        .set(auth())
        .send({
          events: [
            { event: 'acw_start', payload: {}, ordering_key: 'ok' },
            { event: 'acw_start', payload: {}, ordering_key: '\u0007' },
          ],
        });
      expectError(batch, 400, '400-02');
      expect(detailFields(batch)).toEqual(['events[1].ordering_key']);
    });

    it('tells an idempotent repeat with another ordering key from the same request (400-07)', async () => {
      const body = { event: 'acw_start', payload: { call: 'c-ok' }, idempotency_key: 'ordered-once', ordering_key: 'k1' };
      const first = await publish(body).expect(202);
      expect((await publish(body).expect(202)).body.data.id).toBe(first.body.data.id);
      expectError(await publish({ ...body, ordering_key: 'k2' }), 400, '400-07');
    });
  });

  describe('idempotency keys', () => {
    it('answer a repeated request with the first answer and store one event', async () => {
      const body = { event: 'acw_start', payload: { call: 'c-1' }, idempotency_key: 'call-c-1' };
      const first = await publish(body);
      const again = await publish(body);
      expect(again.status).toBe(202);
      expect(again.body).toEqual(first.body);
      expect(await sql(t.db.url, 'SELECT id FROM events WHERE id = $1', [first.body.data.id])).toHaveLength(1);
      expect(await sql(t.db.url, 'SELECT id FROM events WHERE payload = \'{"call":"c-1"}\'')).toHaveLength(1);
    });

    it('refuse the same key with a different body (400-07), and keep keys apart per application', async () => {
      await publish({ event: 'acw_start', payload: { call: 'c-2' }, idempotency_key: 'call-c-2' }).expect(202);
      expectError(await publish({ event: 'acw_start', payload: { call: 'c-3' }, idempotency_key: 'call-c-2' }), 400, '400-07');
      expectError(await publish({ event: 'webhook.test', payload: { call: 'c-2' }, idempotency_key: 'call-c-2' }), 400, '400-07');
      const other = await t.fixtures.tenantWithWebhook();
      expect((await publish({ event: 'acw_start', payload: { call: 'c-3' }, idempotency_key: 'call-c-2' }, other)).status).toBe(202);
    });

    it('are forgotten after 24 hours', async () => {
      const body = { event: 'acw_start', payload: { call: 'c-4' }, idempotency_key: 'call-c-4' };
      const first = await publish(body);
      await sql(t.db.url, "UPDATE idempotency_keys SET created_at = now() - interval '24 hours 1 second' WHERE key = 'call-c-4'");
      const later = await publish(body);
      expect(later.status).toBe(202);
      expect(later.body.data.id).not.toBe(first.body.data.id);
      const changed = await publish({ ...body, payload: { call: 'other' } });
      expectError(changed, 400, '400-07');
    });

    it('give every concurrent duplicate the same event', async () => {
      const body = { event: 'acw_start', payload: { call: 'c-5' }, idempotency_key: 'call-c-5' };
      const answers = await Promise.all(Array.from({ length: 8 }, () => publish(body)));
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(202));
      expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
      expect(new Set(answers.map((a) => a.body.data.deliveries[0])).size).toBe(1);
    });

    it('store one event when two different requests race for one key: the first wins, the other gets 400-07', async () => {
      // Sent together, they share one publish statement (or two, in either order).
      const bodies = Array.from({ length: 8 }, (_, i) => ({
        event: 'acw_start',
        payload: { call: i % 2 === 0 ? 'even' : 'odd' },
        idempotency_key: 'call-race',
      }));
      const answers = await Promise.all(bodies.map((body) => publish(body)));
      const stored = await sql<{ id: string; payload: string }>(
        t.db.url,
        "SELECT id, payload FROM events WHERE idempotency_key = 'call-race'",
      );
      expect(stored).toHaveLength(1);
      answers.forEach((answer, i) => {
        if (JSON.stringify(bodies[i].payload) === stored[0].payload) {
          expect(answer.status).toBe(202);
          expect(answer.body.data.id).toBe(stored[0].id);
        } else {
          expectError(answer, 400, '400-07');
        }
      });
    });

    it('are taken alongside unkeyed publishes sent at the same moment, each publish answered with its own event', async () => {
      const bodies = Array.from({ length: 12 }, (_, i) => ({
        event: 'acw_start',
        payload: { n: i },
        ...(i % 3 === 0 ? {} : { idempotency_key: `mixed-${i}` }),
      }));
      const answers = await Promise.all(bodies.map((body) => publish(body)));
      expect(answers.map((a) => a.status)).toEqual(Array(12).fill(202));
      expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(12);
      for (const [i, answer] of answers.entries()) {
        const [row] = await sql<{ payload: string; idempotency_key: string | null }>(
          t.db.url,
          'SELECT payload, idempotency_key FROM events WHERE id = $1',
          [answer.body.data.id],
        );
        expect(row).toEqual({ payload: JSON.stringify({ n: i }), idempotency_key: i % 3 === 0 ? null : `mixed-${i}` });
      }
    });
  });

  describe('POST /application/{id}/webhook/test', () => {
    it('publishes webhook.test, delivered without a subscription to it', async () => {
      const res = await t.http.post(`${app}/webhook/test`).set(auth());
      expect(res.status).toBe(202);
      expect(res.body.data).toEqual({
        id: expect.stringMatching(/^evt_/),
        event: 'webhook.test',
        deliveries: [expect.stringMatching(/^dlv_/)],
      });
    });

    it('answers 404-02 without a webhook', async () => {
      const bare = await t.fixtures.tenant();
      expectError(await t.http.post(`/application/${bare.applicationId}/webhook/test`).set({ Authorization: bare.key }), 404, '404-02');
    });
  });

  describe('the delivery log', () => {
    let owner: Tenant;
    let ids: string[];
    beforeAll(async () => {
      owner = await t.fixtures.tenantWithWebhook();
      const base = `/application/${owner.applicationId}`;
      for (const event of ['acw_start', 'voice_campaign_activate']) {
        await t.http.put(`${base}/webhook/subscription/${event}`).set({ Authorization: owner.key }).send({}).expect(200);
      }
      ids = [];
      for (const event of ['acw_start', 'voice_campaign_activate', 'acw_start', 'acw_start', 'voice_campaign_activate']) {
        ids.push((await publish({ event, payload: { n: ids.length } }, owner)).body.data.deliveries[0]);
      }
      await setStatus(ids[0], 'failed');
    });
    const list = (query: string) => t.http.get(`/application/${owner.applicationId}/deliveries${query}`).set({ Authorization: owner.key });

    it('lists newest first', async () => {
      const res = await list('');
      expect(res.status).toBe(200);
      expect(res.body.data.map((d: { id: string }) => d.id)).toEqual([...ids].reverse());
      expect(res.body.data[0]).toEqual({
        id: ids[4],
        event_id: expect.stringMatching(/^evt_/),
        event: 'voice_campaign_activate',
        status: 'pending',
        created_at: expect.any(String),
        attempt_count: 0,
        next_attempt_at: expect.any(String),
        // Not attempted yet: no outcome to show.
        last_attempt: null,
      });
      expect(res.body.next_cursor).toBeNull();
    });

    it('filters by status and event, and pages with the cursor', async () => {
      expect((await list('?status=failed')).body.data.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
      expect((await list('?event=voice_campaign_activate')).body.data.map((d: { id: string }) => d.id)).toEqual([ids[4], ids[1]]);
      const first = await list('?limit=2');
      expect(first.body.data.map((d: { id: string }) => d.id)).toEqual([ids[4], ids[3]]);
      const second = await list(`?limit=2&cursor=${first.body.next_cursor}`);
      expect(second.body.data.map((d: { id: string }) => d.id)).toEqual([ids[2], ids[1]]);
      const third = await list(`?limit=2&cursor=${second.body.next_cursor}`);
      expect(third.body.data.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
      expect(third.body.next_cursor).toBeNull();
    });

    it('answers 400-03 for an unknown status filter', async () => {
      expectError(await list('?status=lost'), 400, '400-03');
    });

    it('reads one delivery with its attempts, only within its application', async () => {
      const res = await t.http.get(`/application/${owner.applicationId}/deliveries/${ids[2]}`).set({ Authorization: owner.key });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: ids[2], status: 'pending', attempts: [] });
      expectError(
        await t.http.get(`/application/${owner.applicationId}/deliveries/dlv_nope`).set({ Authorization: owner.key }),
        404,
        '404-05',
      );
      expectError(await t.http.get(`${app}/deliveries/${ids[2]}`).set({ Authorization: tenant.key }), 404, '404-05');
    });

    describe('manual retry', () => {
      const retry = (id: string) =>
        t.http.post(`/application/${owner.applicationId}/deliveries/${id}/retry`).set({ Authorization: owner.key });

      it.each(['failed', 'succeeded'] as const)('gives a %s delivery one attempt now, without follow-ups', async (status) => {
        const id = (await publish({ event: 'acw_start', payload: {} }, owner)).body.data.deliveries[0];
        await setStatus(id, status);
        const before = Date.now();
        const res = await retry(id);
        expect(res.status).toBe(202);
        expect(res.body.data).toMatchObject({ id, status: 'pending' });
        expect(new Date(res.body.data.next_attempt_at).getTime()).toBeGreaterThanOrEqual(before - 1000);
        const [row] = await sql(t.db.url, 'SELECT manual_attempt FROM deliveries WHERE id = $1', [id]);
        expect(row.manual_attempt).toBe(true);
      });

      it('brings a pending delivery forward and keeps its schedule', async () => {
        const id = (await publish({ event: 'acw_start', payload: {} }, owner)).body.data.deliveries[0];
        await sql(t.db.url, "UPDATE deliveries SET next_attempt_at = now() + interval '1 hour' WHERE id = $1", [id]);
        await sql(t.db.url, "UPDATE delivery_queue SET due_at = now() + interval '1 hour' WHERE delivery_id = $1", [id]);
        const res = await retry(id);
        expect(res.status).toBe(202);
        expect(new Date(res.body.data.next_attempt_at).getTime()).toBeLessThan(Date.now() + 5_000);
        const [row] = await sql(t.db.url, 'SELECT manual_attempt FROM deliveries WHERE id = $1', [id]);
        expect(row.manual_attempt).toBe(false);
      });

      it.each(['cancelled', 'sending'] as const)('answers 409-00 for a %s delivery', async (status) => {
        const id = (await publish({ event: 'acw_start', payload: {} }, owner)).body.data.deliveries[0];
        await setStatus(id, status);
        expectError(await retry(id), 409, '409-00');
      });

      it('answers 404-05 for a delivery of another application', async () => {
        expectError(await retry('dlv_nope'), 404, '404-05');
      });
    });
  });

  describe('cancellation', () => {
    it('deleting a subscription cancels its pending deliveries and no others', async () => {
      const owner = await t.fixtures.tenantWithWebhook();
      const base = `/application/${owner.applicationId}`;
      for (const event of ['acw_start', 'voice_campaign_activate']) {
        await t.http.put(`${base}/webhook/subscription/${event}`).set({ Authorization: owner.key }).send({}).expect(200);
      }
      const acw = (await publish({ event: 'acw_start', payload: {} }, owner)).body.data.deliveries[0];
      const voice = (await publish({ event: 'voice_campaign_activate', payload: {} }, owner)).body.data.deliveries[0];
      const ping = (await t.http.post(`${base}/webhook/test`).set({ Authorization: owner.key })).body.data.deliveries[0];
      await t.http.delete(`${base}/webhook/subscription/acw_start`).set({ Authorization: owner.key }).expect(200);
      const statuses = await sql<{ id: string; status: string }>(t.db.url, 'SELECT id, status::text FROM deliveries WHERE id = ANY($1)', [
        [acw, voice, ping],
      ]);
      expect(Object.fromEntries(statuses.map((r) => [r.id, r.status]))).toEqual({
        [acw]: 'cancelled',
        [voice]: 'pending',
        [ping]: 'pending',
      });
    });

    it('deactivating leaves the cancelling to the worker, when the delivery comes due', async () => {
      const owner = await t.fixtures.tenantWithWebhook();
      const base = `/application/${owner.applicationId}`;
      await t.http.put(`${base}/webhook/subscription/acw_start`).set({ Authorization: owner.key }).send({}).expect(200);
      const id = (await publish({ event: 'acw_start', payload: {} }, owner)).body.data.deliveries[0];
      await t.http.put(`${base}/webhook/subscription/acw_start`).set({ Authorization: owner.key }).send({ active: false }).expect(200);
      expect((await sql(t.db.url, 'SELECT status::text FROM deliveries WHERE id = $1', [id]))[0].status).toBe('pending');
    });

    it('deleting the webhook cancels every pending delivery of the application', async () => {
      const owner = await t.fixtures.tenantWithWebhook();
      const base = `/application/${owner.applicationId}`;
      await t.http.put(`${base}/webhook/subscription/acw_start`).set({ Authorization: owner.key }).send({}).expect(200);
      const ids = [
        (await publish({ event: 'acw_start', payload: {} }, owner)).body.data.deliveries[0],
        (await t.http.post(`${base}/webhook/test`).set({ Authorization: owner.key })).body.data.deliveries[0],
      ];
      await t.http.delete(`${base}/webhook`).set({ Authorization: owner.key }).expect(200);
      const rows = await sql<{ status: string }>(t.db.url, 'SELECT status::text FROM deliveries WHERE id = ANY($1)', [ids]);
      expect(rows.map((r) => r.status)).toEqual(['cancelled', 'cancelled']);
    });
  });
});
