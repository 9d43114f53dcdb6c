import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';
import { detailFields, expectError } from './support/expect-error';

describe('admin routes and the event-type catalogue (PRODUCT.md §4, §6)', () => {
  let t: TestApp;
  const admin = (method: 'post' | 'delete', path: string) => t.http[method](path).set('Authorization', ADMIN_KEY);

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('accounts', () => {
    it('creates an account: 201 with its id and name', async () => {
      const res = await admin('post', '/admin/accounts').send({ name: 'Acme' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ success: true, data: { id: expect.stringMatching(/^acc_[0-9a-z]{26}$/), name: 'Acme' } });
    });

    it.each([[{}], [{ name: '' }], [{ name: 'x'.repeat(201) }], [{ name: 7 }]])('refuses %j with 400-02 naming name', async (body) => {
      const res = await admin('post', '/admin/accounts').send(body);
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toEqual(['name']);
    });
  });

  describe('applications', () => {
    let accountId: string;
    beforeAll(async () => {
      accountId = await t.fixtures.account();
    });

    it('creates an application with the platform id, and 409-00 when that id is taken', async () => {
      const res = await admin('post', '/admin/applications').send({ id: 2_147_483_647, name: 'Max', account_id: accountId });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ success: true, data: { id: 2_147_483_647, name: 'Max', account_id: accountId } });
      expectError(
        await admin('post', '/admin/applications').send({ id: 2_147_483_647, name: 'Again', account_id: accountId }),
        409,
        '409-00',
      );
    });

    it('chooses the next free id when none is given', async () => {
      await admin('post', '/admin/applications').send({ id: 500, name: 'Low', account_id: accountId }).expect(201);
      const first = await admin('post', '/admin/applications').send({ name: 'Auto', account_id: accountId });
      expect(first.status).toBe(201);
      expect(first.body.data.id).toBeGreaterThan(0);
      const ids = await Promise.all(
        [1, 2, 3, 4].map(() => admin('post', '/admin/applications').send({ name: 'Auto', account_id: accountId })),
      );
      expect(ids.map((r) => r.status)).toEqual([201, 201, 201, 201]);
      expect(new Set(ids.map((r) => r.body.data.id)).size).toBe(4);
    });

    it('answers 404-06 for an account that does not exist', async () => {
      const res = await admin('post', '/admin/applications').send({ name: 'x', account_id: 'acc_00000000000000000000000000' });
      expectError(res, 404, '404-06');
    });

    it.each([
      [{ id: 0 }, 'id'],
      [{ id: 2_147_483_648 }, 'id'],
      [{ id: '42' }, 'id'],
      [{ account_id: 'someone' }, 'account_id'],
    ])('refuses %j with 400-02 naming %s', async (change, field) => {
      const res = await admin('post', '/admin/applications').send({ name: 'x', account_id: accountId, ...change });
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toEqual([field]);
    });
  });

  describe('API keys', () => {
    it('answers 404-06 for an account that does not exist', async () => {
      const res = await admin('post', '/admin/api_keys').send({ name: 'x', account_id: 'acc_00000000000000000000000000' });
      expectError(res, 404, '404-06');
    });

    it('makes a different key every time', async () => {
      const accountId = await t.fixtures.account();
      const keys = await Promise.all([1, 2].map(() => t.fixtures.apiKey(accountId)));
      expect(keys[0].key).not.toBe(keys[1].key);
    });
  });

  describe('event types', () => {
    it('lists the seeded catalogue', async () => {
      const res = await t.http.get('/event_types').set('Authorization', ADMIN_KEY);
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(res.body.data.map((e: { name: string }) => e.name)).toEqual(
        expect.arrayContaining(['acw_start', 'voice_campaign_activate', 'webhook.test']),
      );
      expect(res.body.next_cursor).toBeNull();
    });

    it('adds an event type (description optional) and answers 409-00 for a name that exists', async () => {
      const res = await admin('post', '/admin/event_types').send({ name: 'queue.overflow', description: 'Callers waiting too long.' });
      expect(res.status).toBe(201);
      const noSchema = { schema: null, enforce: false, example: null };
      expect(res.body).toEqual({ success: true, data: { name: 'queue.overflow', description: 'Callers waiting too long.', ...noSchema } });
      expect((await admin('post', '/admin/event_types').send({ name: 'agent_login' })).body.data).toEqual({
        name: 'agent_login',
        description: '',
        ...noSchema,
      });
      expectError(await admin('post', '/admin/event_types').send({ name: 'acw_start' }), 409, '409-00');
    });

    it.each([
      [{ name: 'Upper' }, 'name'],
      [{ name: 'has-dash' }, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'a'.repeat(65) }, 'name'],
      [{ name: 'ok', description: 'd'.repeat(1001) }, 'description'],
    ])('refuses %j with 400-02 naming %s', async (body, field) => {
      const res = await admin('post', '/admin/event_types').send(body);
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toEqual([field]);
    });

    it('accepts a 64-character name', async () => {
      expect((await admin('post', '/admin/event_types').send({ name: 'a'.repeat(64) })).status).toBe(201);
    });

    it('pages through the catalogue with limit and next_cursor', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
        const res = await t.http.get(`/event_types${query}`).set('Authorization', ADMIN_KEY);
        expect(res.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.data.map((e: { name: string }) => e.name));
        cursor = res.body.next_cursor;
      } while (cursor);
      const all = (await t.http.get('/event_types?limit=100').set('Authorization', ADMIN_KEY)).body.data.map(
        (e: { name: string }) => e.name,
      );
      expect(seen).toEqual(all);
      expect([...all].sort()).toEqual(all);
    });
  });
});
