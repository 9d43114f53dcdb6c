import { sql } from '@herald/database/testing';
import { detailFields, expectError } from './support/expect-error';
import { Tenant } from './support/fixtures';
import { createTestApp, TestApp } from './support/test-app';

/** PRODUCT.md §14: a subscription's filter on the payload decides which events get a delivery. */
describe('subscription filters', () => {
  let t: TestApp;
  let tenant: Tenant;
  let app: string;
  let auth: { Authorization: string };
  const filterUrl = (event = 'acw_start') => `${app}/webhook/subscription/${event}/filter`;
  const putFilter = (filter: unknown, event = 'acw_start') => t.http.put(filterUrl(event)).set(auth).send({ filter });
  const publish = (payload: unknown, event = 'acw_start') => t.http.post(`${app}/events`).set(auth).send({ event, payload });
  const deliveriesOf = async (payload: unknown) => {
    const res = await publish(payload);
    expect(res.status).toBe(202);
    return res.body.data.deliveries as string[];
  };

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenantWithWebhook();
    app = `/application/${tenant.applicationId}`;
    auth = { Authorization: tenant.key };
    await t.http.put(`${app}/webhook/subscription/acw_start`).set(auth).send({}).expect(200);
  });
  afterAll(() => t.close());

  describe('the routes', () => {
    it('reads null, sets, reads back as written, and removes a filter; the seed map stays as it is', async () => {
      expect((await t.http.get(filterUrl()).set(auth).expect(200)).body).toEqual({
        success: true,
        data: { event: 'acw_start', filter: null },
      });

      const filter = { 'queue.id': { $in: ['q-2', 'q-1'] }, $or: [{ priority: { $gte: 3 } }, { vip: true }], z: 1, a: 2 };
      const put = await putFilter(filter).expect(200);
      expect(put.body).toEqual({ success: true, data: { event: 'acw_start', filter } });
      const read = await t.http.get(filterUrl()).set(auth).expect(200);
      expect(read.body.data.filter).toEqual(filter);
      expect(Object.keys(read.body.data.filter)).toEqual(['queue.id', '$or', 'z', 'a']);

      const map = await t.http.get(`${app}/webhook/subscription`).set(auth).expect(200);
      expect(map.body).toEqual({ success: true, subscriptions: { acw_start: { ensure_delivery: false, active: true } } });

      expect((await t.http.delete(filterUrl()).set(auth).expect(200)).body).toEqual({
        success: true,
        data: { event: 'acw_start', filter: null },
      });
      expect((await t.http.get(filterUrl()).set(auth).expect(200)).body.data.filter).toBeNull();
    });

    it('keeps names Object.prototype carries as ordinary paths and keys', async () => {
      const filter = JSON.parse('{"__proto__.x": 1, "constructor": {"$exists": false}, "meta": {"__proto__": {"toString": 2}}}');
      const put = await putFilter(filter).expect(200);
      expect(JSON.stringify(put.body.data.filter)).toBe(JSON.stringify(filter));
      const read = await t.http.get(filterUrl()).set(auth).expect(200);
      expect(JSON.stringify(read.body.data.filter)).toBe(JSON.stringify(filter));
      expect(await deliveriesOf(JSON.parse('{"__proto__": {"x": 1}, "meta": {"__proto__": {"toString": 2}}}'))).toHaveLength(1);
      expect(await deliveriesOf({ meta: {} })).toHaveLength(0);
      await t.http.delete(filterUrl()).set(auth).expect(200);
    });

    it('answers 404-03 for a subscription the application does not have, and 404-02 without a webhook', async () => {
      for (const event of ['voice_campaign_activate', 'no_such_type', 'UPPER']) {
        expectError(await t.http.get(filterUrl(event)).set(auth), 404, '404-03');
        expectError(await putFilter({ a: 1 }, event), 404, '404-03');
        expectError(await t.http.delete(filterUrl(event)).set(auth), 404, '404-03');
        expectError(
          await t.http
            .post(`${filterUrl(event)}/test`)
            .set(auth)
            .send({}),
          404,
          '404-03',
        );
      }
      const bare = await t.fixtures.tenant();
      expectError(
        await t.http.get(`/application/${bare.applicationId}/webhook/subscription/acw_start/filter`).set({ Authorization: bare.key }),
        404,
        '404-02',
      );
    });

    it('refuses a body without a filter object', async () => {
      expectError(await t.http.put(filterUrl()).set(auth).send({}), 400, '400-02');
      for (const filter of [null, [], 'a', 5]) expectError(await putFilter(filter), 400, '400-02');
      const unknown = await t.http.put(filterUrl()).set(auth).send({ filter: {}, extra: 1 });
      expectError(unknown, 400, '400-02');
      expect(detailFields(unknown)).toEqual(['extra']);
    });
  });

  describe('every bound of §14, refused with the exact place', () => {
    const refused = async (filter: unknown, field: string) => {
      const res = await putFilter(filter);
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toContain(field);
      return res;
    };

    it('names an operator outside the subset where it is', async () => {
      await refused({ $or: [{ a: 1 }, { 'queue.id': { $regex: '^q' } }] }, 'filter.$or[1].queue.id.$regex');
      await refused({ $where: 'sleep(1000)' }, 'filter.$where');
      await refused({ $expr: { $gt: ['$a', 1] } }, 'filter.$expr');
      await refused({ a: { $not: { $gt: 1 } } }, 'filter.a.$not');
    });

    it('names an operand of the wrong type', async () => {
      await refused({ $or: [{ a: 1 }, { 'queue.id': { $gt: true } }] }, 'filter.$or[1].queue.id.$gt');
      await refused({ a: { $exists: 'yes' } }, 'filter.a.$exists');
      await refused({ $and: [] }, 'filter.$and');
      await refused({ $not: [{ a: 1 }] }, 'filter.$not');
      await refused({ 'a..b': 1 }, 'filter.a..b');
    });

    it('refuses more than 100 literals in $in, 64 conditions, 8 levels, 4 KiB', async () => {
      await refused({ tags: { $in: Array.from({ length: 101 }, (_, i) => i) } }, 'filter.tags.$in');
      await putFilter({ tags: { $nin: Array.from({ length: 100 }, (_, i) => i) } }).expect(200);

      const conditions = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, i]));
      await putFilter(conditions(64)).expect(200);
      await refused(conditions(65), 'filter.f64');

      let deep: object = { a: 1 };
      for (let level = 2; level <= 8; level++) deep = { $not: deep };
      await putFilter(deep).expect(200);
      await refused({ $not: deep }, 'filter.$not.$not.$not.$not.$not.$not.$not.$not');

      await putFilter({ s: 'x'.repeat(4088) }).expect(200);
      const big = await refused({ s: 'x'.repeat(4089) }, 'filter');
      expect(big.body.error.details[0].message).toContain('at most 4096 bytes');
      await t.http.delete(filterUrl()).set(auth).expect(200);
    });

    it('answers a filter nested past the JSON parser limit with 400-01, not a crash', async () => {
      const nested = `${'{"$not":'.repeat(40)}{"a":1}${'}'.repeat(40)}`;
      const res = await t.http
        .put(filterUrl())
        .set({ ...auth, 'Content-Type': 'application/json' })
        .send(`{"filter":${nested}}`);
      expectError(res, 400, '400-01');
    });

    it('stores nothing it refused', async () => {
      await putFilter({ kept: true }).expect(200);
      await refused({ a: { $regex: 'x' } }, 'filter.a.$regex');
      expect((await t.http.get(filterUrl()).set(auth).expect(200)).body.data.filter).toEqual({ kept: true });
      await t.http.delete(filterUrl()).set(auth).expect(200);
    });
  });

  describe('at publish', () => {
    afterEach(async () => {
      await t.http.delete(filterUrl()).set(auth);
    });

    it('makes no delivery for a payload the filter refuses, and still stores the event', async () => {
      await putFilter({ 'queue.id': 'q-sales', priority: { $gte: 3 } }).expect(200);
      expect(await deliveriesOf({ queue: { id: 'q-sales' }, priority: 5 })).toHaveLength(1);
      const refusedEvent = await publish({ queue: { id: 'q-sales' }, priority: 1 });
      expect(refusedEvent.status).toBe(202);
      expect(refusedEvent.body.data.deliveries).toEqual([]);
      const stored = await t.http.get(`${app}/events/${refusedEvent.body.data.id}`).set(auth).expect(200);
      expect(stored.body.data).toMatchObject({ payload: { queue: { id: 'q-sales' }, priority: 1 }, deliveries: [] });
    });

    it('filters each item of a batch on its own subscription', async () => {
      await t.http.put(`${app}/webhook/subscription/voice_campaign_activate`).set(auth).send({}).expect(200);
      await putFilter({ n: { $gt: 1 } }).expect(200);
      const res = await t.http
        .post(`${app}/events/batch`)
        .set(auth)
        .send({
          events: [
            { event: 'acw_start', payload: { n: 1 } },
            { event: 'acw_start', payload: { n: 2 } },
            { event: 'voice_campaign_activate', payload: { n: 1 } },
          ],
        })
        .expect(202);
      expect(res.body.data.map((item: { deliveries: string[] }) => item.deliveries.length)).toEqual([0, 1, 1]);
    });

    it('applies the filter to a replay as to a publish now, and never to a test event', async () => {
      const before = await publish({ n: 1 });
      await putFilter({ n: 2 }).expect(200);
      const replay = await t.http.post(`${app}/events/${before.body.data.id}/replay`).set(auth).expect(202);
      expect(replay.body.data.deliveries).toEqual([]);
      await putFilter({ n: 1 }).expect(200);
      expect((await t.http.post(`${app}/events/${before.body.data.id}/replay`).set(auth).expect(202)).body.data.deliveries).toHaveLength(1);
      expect((await t.http.post(`${app}/webhook/test`).set(auth).expect(202)).body.data.deliveries).toHaveLength(1);
    });

    it("forgets a deleted subscription's filter: subscribed again, every event is delivered", async () => {
      await putFilter({ never: true }).expect(200);
      expect(await deliveriesOf({})).toEqual([]);
      await t.http.delete(`${app}/webhook/subscription/acw_start`).set(auth).expect(200);
      await t.http.put(`${app}/webhook/subscription/acw_start`).set(auth).send({}).expect(200);
      expect(await deliveriesOf({})).toHaveLength(1);
    });

    it('reaches another api process within a second of each change, a webhook deleted by hand included', async () => {
      const other = await createTestApp({ databaseUrl: t.db.url });
      try {
        const deliveredThere = async () =>
          (
            await other.http
              .post(`${app}/events`)
              .set(auth)
              .send({ event: 'acw_start', payload: { n: 1 } })
              .expect(202)
          ).body.data.deliveries.length === 1;
        const within = async (expected: boolean) => {
          const changedAt = Date.now();
          let seen = await deliveredThere();
          while (seen !== expected && Date.now() - changedAt < 1_000) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            seen = await deliveredThere();
          }
          expect(seen).toBe(expected);
          expect(Date.now() - changedAt).toBeLessThan(1_000);
        };
        expect(await deliveredThere()).toBe(true); // the other process now holds "no filter"

        await putFilter({ n: 2 }).expect(200);
        await within(false);
        await t.http.delete(filterUrl()).set(auth).expect(200);
        await within(true);
        await putFilter({ n: { $ne: 1 } }).expect(200);
        await within(false);

        // A statement by hand (no api involved) reaches it too: the trigger NOTIFYs.
        await sql(t.db.url, `UPDATE subscriptions SET filter = NULL WHERE application_id = $1`, [tenant.applicationId]);
        await within(true);
      } finally {
        await other.app.close();
      }
    });
  });

  describe('the test route', () => {
    let ids: string[];
    beforeAll(async () => {
      const other = await t.fixtures.tenantWithWebhook();
      app = `/application/${other.applicationId}`;
      auth = { Authorization: other.key };
      await t.http.put(`${app}/webhook/subscription/acw_start`).set(auth).send({}).expect(200);
      ids = [];
      for (let n = 0; n < 30; n++) ids.unshift((await publish({ n, even: n % 2 === 0 }).expect(202)).body.data.id);
      await publish({ n: 100 }, 'voice_campaign_activate').expect(202);
    });

    it('tries a filter on the latest events of the type, newest first, at most 20 ids', async () => {
      const res = await t.http
        .post(`${filterUrl()}/test`)
        .set(auth)
        .send({ filter: { even: true } })
        .expect(200);
      expect(res.body).toEqual({
        success: true,
        data: { tested: 30, matched: 15, matched_ids: ids.filter((_, i) => i % 2 === 1).slice(0, 15) },
      });
      const all = await t.http.post(`${filterUrl()}/test`).set(auth).send({ filter: {} }).expect(200);
      expect(all.body.data).toEqual({ tested: 30, matched: 30, matched_ids: ids.slice(0, 20) });
    });

    it('takes the stored filter by default (none: every event matches) and honours limit', async () => {
      expect((await t.http.post(`${filterUrl()}/test`).set(auth).send({}).expect(200)).body.data.matched).toBe(30);
      await putFilter({ n: { $lt: 10 } }).expect(200);
      expect((await t.http.post(`${filterUrl()}/test`).set(auth).send({}).expect(200)).body.data).toMatchObject({
        tested: 30,
        matched: 10,
      });
      const limited = await t.http.post(`${filterUrl()}/test`).set(auth).send({ limit: 25 }).expect(200);
      expect(limited.body.data).toMatchObject({ tested: 25, matched: 5 });
      await t.http.delete(filterUrl()).set(auth).expect(200);
    });

    it('refuses a bad filter or limit, naming it, and changes nothing', async () => {
      const bad = await t.http
        .post(`${filterUrl()}/test`)
        .set(auth)
        .send({ filter: { $or: [{ n: { $size: 1 } }] } });
      expectError(bad, 400, '400-02');
      expect(detailFields(bad)).toEqual(['filter.$or[0].n.$size']);
      for (const limit of [0, 1001, '5', 1.5]) {
        const res = await t.http.post(`${filterUrl()}/test`).set(auth).send({ limit });
        expectError(res, 400, '400-02');
        expect(detailFields(res)).toEqual(['limit']);
      }
      expect((await t.http.get(filterUrl()).set(auth).expect(200)).body.data.filter).toBeNull();
    });
  });
});
