import { expectError } from './support/expect-error';
import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';

/** PRODUCT.md §9: what an operator lists — accounts, applications, API keys — cursor-paged. */
describe('admin listing (GET /admin/accounts, /admin/applications, /admin/api_keys)', () => {
  let t: TestApp;
  const get = (path: string, key = ADMIN_KEY) => t.http.get(path).set('Authorization', key);

  /** Every item of a listing, following next_cursor page by page. */
  async function everything(path: string, limit: number): Promise<{ pages: number; items: any[] }> {
    const items: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const separator = path.includes('?') ? '&' : '?';
      const res = await get(`${path}${separator}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      items.push(...res.body.data);
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor !== null);
    return { pages, items };
  }

  let accounts: string[];
  let keyIds: string[];
  let applications: number[];

  beforeAll(async () => {
    t = await createTestApp();
    accounts = [];
    keyIds = [];
    applications = [];
    for (let i = 0; i < 3; i++) {
      const account = await t.fixtures.account(`Listed ${i}`);
      accounts.push(account);
      for (let j = 0; j < 2; j++) applications.push(await t.fixtures.application(account));
      keyIds.push((await t.fixtures.apiKey(account)).id);
    }
  });
  afterAll(() => t.close());

  it('lists every account newest first, page by page', async () => {
    const { pages, items } = await everything('/admin/accounts', 2);
    expect(pages).toBeGreaterThanOrEqual(2);
    const ids = items.map((account) => account.id);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(new Set(ids).size).toBe(ids.length);
    expect(items).toEqual(expect.arrayContaining(accounts.map((id, i) => ({ id, name: `Listed ${i}` }))));
  });

  it("lists applications by id, every one once, or one account's", async () => {
    const { items } = await everything('/admin/applications', 2);
    const ids = items.map((application) => application.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(ids).toEqual(expect.arrayContaining(applications));
    const one = await everything(`/admin/applications?account_id=${accounts[1]}`, 1);
    expect(one.items).toEqual(applications.slice(2, 4).map((id) => ({ id, name: `Application ${id}`, account_id: accounts[1] })));
  });

  it('lists API keys with prefix, name, scope and dates, never key material', async () => {
    const { items } = await everything('/admin/api_keys', 2);
    const ids = items.map((key) => key.id);
    expect(ids).toEqual(expect.arrayContaining([...keyIds, 'key_bootstrap_admin']));
    for (const key of items) {
      expect(Object.keys(key).sort()).toEqual(['account_id', 'created_at', 'id', 'name', 'prefix', 'revoked_at', 'scope']);
      // Keys Herald made show hk_ and a few characters; the bootstrap key shows the start of HERALD_ADMIN_KEY.
      if (key.id !== 'key_bootstrap_admin') expect(key.prefix).toMatch(/^hk_[A-Za-z0-9_-]{6}$/);
      expect(new Date(key.created_at).toISOString()).toBe(key.created_at);
    }
    const revoked = await t.http.delete(`/admin/api_keys/${keyIds[0]}`).set('Authorization', ADMIN_KEY);
    expect(revoked.status).toBe(200);
    const mine = await get(`/admin/api_keys?account_id=${accounts[0]}`);
    expect(mine.body.data).toEqual([
      expect.objectContaining({ id: keyIds[0], account_id: accounts[0], scope: 'account', revoked_at: revoked.body.data.revoked_at }),
    ]);
    expect(JSON.stringify(mine.body)).not.toMatch(/hk_[A-Za-z0-9_-]{20,}|key_hash/);
  });

  it('pages past the bootstrap admin key, whose id is not a ULID', async () => {
    const { items } = await everything('/admin/api_keys', 1);
    expect(items.map((key) => key.id)).toContain('key_bootstrap_admin');
  });

  it.each([
    '/admin/accounts?cursor=garbage',
    '/admin/accounts?cursor=key_01jd8x7a1b2c3d4e5f6g7h8j9k',
    '/admin/applications?cursor=0',
    '/admin/applications?account_id=nope',
    '/admin/api_keys?account_id=acc_%00',
    '/admin/api_keys?limit=0',
  ])('GET %s is 400-03', async (path) => {
    expectError(await get(path), 400, '400-03');
  });

  it('is for admin keys only: an account key gets 403-04', async () => {
    const tenant = await t.fixtures.tenant();
    for (const path of ['/admin/accounts', '/admin/applications', '/admin/api_keys']) {
      expectError(await get(path, tenant.key), 403, '403-04');
    }
  });

  describe('reading one (GET /admin/accounts/{id}, /admin/applications/{id}, /admin/api_keys/{id})', () => {
    it('answers an account as the listing shows it', async () => {
      const res = await get(`/admin/accounts/${accounts[2]}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: { id: accounts[2], name: 'Listed 2' } });
      const listed = (await get(`/admin/accounts?limit=100`)).body.data.find((account: { id: string }) => account.id === accounts[2]);
      expect(res.body.data).toEqual(listed);
    });

    it('answers an application as the listing shows it, with an integer id', async () => {
      const res = await get(`/admin/applications/${applications[3]}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        success: true,
        data: { id: applications[3], name: `Application ${applications[3]}`, account_id: accounts[1] },
      });
      const listed = (await get(`/admin/applications?account_id=${accounts[1]}`)).body.data;
      expect(listed).toContainEqual(res.body.data);
    });

    it('answers an API key as the listing shows it, revoked or not, never with key material', async () => {
      const account = await t.fixtures.account('Key reader');
      const issued = await t.fixtures.apiKey(account);
      const live = await get(`/admin/api_keys/${issued.id}`);
      expect(live.status).toBe(200);
      expect(live.body.data).toEqual({
        id: issued.id,
        name: 'test',
        prefix: issued.key.slice(0, 9),
        account_id: account,
        scope: 'account',
        created_at: expect.any(String),
        revoked_at: null,
      });
      expect(JSON.stringify(live.body)).not.toContain(issued.key);
      expect((await get(`/admin/api_keys?account_id=${account}`)).body.data).toEqual([live.body.data]);

      const revoked = await t.http.delete(`/admin/api_keys/${issued.id}`).set('Authorization', ADMIN_KEY);
      expect(revoked.status).toBe(200);
      const after = await get(`/admin/api_keys/${issued.id}`);
      expect(after.status).toBe(200);
      expect(after.body.data).toEqual({ ...live.body.data, revoked_at: revoked.body.data.revoked_at });
      expect(after.body.data.revoked_at).not.toBeNull();
    });

    it('reads the bootstrap admin key, whose id is not a ULID', async () => {
      const res = await get('/admin/api_keys/key_bootstrap_admin');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(
        expect.objectContaining({
          id: 'key_bootstrap_admin',
          scope: 'admin',
          account_id: null,
          name: 'HERALD_ADMIN_KEY',
          prefix: expect.stringMatching(/^env:[0-9a-f]{8}$/),
          revoked_at: null,
        }),
      );
      // None of the operator's key, not even the start the prefix used to show.
      expect(JSON.stringify(res.body)).not.toContain(ADMIN_KEY.slice(0, 9));
    });

    it.each([
      ['/admin/accounts/acc_00000000000000000000000000', 404, '404-06'],
      ['/admin/accounts/acc_nope', 404, '404-06'],
      ['/admin/accounts/key_01jd8x7a1b2c3d4e5f6g7h8j9k', 404, '404-06'],
      ['/admin/accounts/acc_%00', 404, '404-06'],
      ['/admin/api_keys/key_00000000000000000000000000', 404, '404-06'],
      ['/admin/api_keys/key_nope', 404, '404-06'],
      ['/admin/api_keys/acc_01jd8x6q3k2m4n5p6r7s8t9v0w', 404, '404-06'],
      ['/admin/applications/2147483647', 404, '404-01'],
      ['/admin/applications/2147483648', 404, '404-01'],
      ['/admin/applications/99999999999', 404, '404-01'],
      ['/admin/applications/0', 404, '404-01'],
      ['/admin/applications/-1', 404, '404-01'],
      ['/admin/applications/042', 404, '404-01'],
      ['/admin/applications/1e3', 404, '404-01'],
      ['/admin/applications/abc', 404, '404-01'],
    ])('GET %s is %i %s', async (path, status, code) => {
      expectError(await get(path), status, code);
    });

    it('names the id asked for, quoted, in the message', async () => {
      const res = await get('/admin/api_keys/key_nope');
      expect(res.body.error.message).toBe('API key "key_nope" does not exist.');
    });

    it('is for admin keys only: an account key gets 403-04', async () => {
      const tenant = await t.fixtures.tenant();
      for (const path of [
        `/admin/accounts/${tenant.accountId}`,
        `/admin/applications/${tenant.applicationId}`,
        '/admin/api_keys/key_bootstrap_admin',
      ]) {
        expectError(await get(path, tenant.key), 403, '403-04');
      }
    });

    it('is documented: each route with its item schema, its 404 and an integer application id', async () => {
      const doc = (await get('/docs-json')).body;
      const schemaOf = (path: string) => doc.paths[path].get.responses['200'].content['application/json'].schema.$ref;
      expect(schemaOf('/admin/accounts/{id}')).toBe('#/components/schemas/AccountResponse');
      expect(schemaOf('/admin/applications/{id}')).toBe('#/components/schemas/ApplicationResponse');
      expect(schemaOf('/admin/api_keys/{id}')).toBe('#/components/schemas/ApiKeyResponse');
      for (const path of ['/admin/accounts/{id}', '/admin/applications/{id}', '/admin/api_keys/{id}']) {
        expect(Object.keys(doc.paths[path].get.responses)).toEqual(expect.arrayContaining(['200', '403', '404']));
      }
      expect(doc.paths['/admin/applications/{id}'].get.responses['404'].description).toContain('404-01');
      expect(doc.paths['/admin/api_keys/{id}'].get.responses['404'].description).toContain('404-06');
      expect(doc.components.schemas.ApplicationDto.properties.id.type).toBe('integer');
    });
  });
});
