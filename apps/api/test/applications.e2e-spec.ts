import { expectError } from './support/expect-error';
import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';

/** PRODUCT.md §12: "an account key sees its own applications" — GET /applications, cursor-paged like the admin lists. */
describe('GET /applications', () => {
  let t: TestApp;
  const get = (path: string, key: string) => t.http.get(path).set('Authorization', key);

  /** Every item of the listing for one key, following next_cursor page by page. */
  async function everything(key: string, limit: number): Promise<{ pages: number; items: any[] }> {
    const items: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/applications?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, key);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'next_cursor', 'success']);
      expect(res.body.success).toBe(true);
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      items.push(...res.body.data);
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor !== null);
    return { pages, items };
  }

  let first: { accountId: string; key: string; applications: number[] };
  let second: { accountId: string; key: string; applications: number[] };

  const application = (id: number, accountId: string) => ({ id, name: `Application ${id}`, account_id: accountId });

  beforeAll(async () => {
    t = await createTestApp();
    const make = async (name: string, count: number) => {
      const accountId = await t.fixtures.account(name);
      const applications: number[] = [];
      for (let i = 0; i < count; i++) applications.push(await t.fixtures.application(accountId));
      return { accountId, key: (await t.fixtures.apiKey(accountId)).key, applications };
    };
    first = await make('First', 4);
    second = await make('Second', 2);
    // Interleaved ids: the first account's last application comes after the second's.
    first.applications.push(await t.fixtures.application(first.accountId));
  });
  afterAll(() => t.close());

  it("gives an account key its own account's applications, by id, and nothing of another account's", async () => {
    const mine = await get('/applications', first.key);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual({ success: true, data: first.applications.map((id) => application(id, first.accountId)), next_cursor: null });

    const theirs = await get('/applications', `Bearer ${second.key}`);
    expect(theirs.status).toBe(200);
    expect(theirs.body.data).toEqual(second.applications.map((id) => application(id, second.accountId)));
  });

  it('answers the same shape as GET /admin/applications', async () => {
    const own = await get('/applications', second.key);
    const admin = await get(`/admin/applications?account_id=${second.accountId}`, ADMIN_KEY);
    expect(own.body).toEqual(admin.body);
  });

  it('gives an account without applications an empty list', async () => {
    const accountId = await t.fixtures.account('Empty');
    const { key } = await t.fixtures.apiKey(accountId);
    expect((await get('/applications', key)).body).toEqual({ success: true, data: [], next_cursor: null });
  });

  it('gives an admin key every application, by id, each once', async () => {
    const { items } = await everything(ADMIN_KEY, 100);
    const ids = items.map((item) => item.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
    expect(items).toEqual(
      expect.arrayContaining([
        ...first.applications.map((id) => application(id, first.accountId)),
        ...second.applications.map((id) => application(id, second.accountId)),
      ]),
    );
    expect((await everything(ADMIN_KEY, 2)).items).toEqual(items);
  });

  it('pages with next_cursor, limit at a time, the last page with next_cursor null', async () => {
    const page1 = await get('/applications?limit=2', first.key);
    expect(page1.body.data.map((item: { id: number }) => item.id)).toEqual(first.applications.slice(0, 2));
    expect(page1.body.next_cursor).toBe(String(first.applications[1]));
    const page2 = await get(`/applications?limit=2&cursor=${page1.body.next_cursor}`, first.key);
    expect(page2.body.data.map((item: { id: number }) => item.id)).toEqual(first.applications.slice(2, 4));

    const { pages, items } = await everything(first.key, 2);
    expect(pages).toBe(3);
    expect(items.map((item) => item.id)).toEqual(first.applications);
    // A cursor taken from another account's listing still gives only one's own.
    const after = await get(`/applications?cursor=${second.applications[0]}`, first.key);
    expect(after.body.data).toEqual([application(first.applications[4], first.accountId)]);
  });

  it.each([
    '/applications?cursor=garbage',
    '/applications?cursor=0',
    '/applications?cursor=042',
    '/applications?cursor=1&cursor=2',
    '/applications?limit=0',
    '/applications?limit=101',
    '/applications?limit=ten',
    `/applications?account_id=acc_01jd8x6q3k2m4n5p6r7s8t9v0w`,
  ])('GET %s is 400-03', async (path) => {
    expectError(await get(path, first.key), 400, '400-03');
  });

  it('needs a key: 403-01 without one, 403-02 with an unknown one', async () => {
    expectError(await t.http.get('/applications'), 403, '403-01');
    expectError(await get('/applications', `hk_${'A'.repeat(43)}`), 403, '403-02');
  });

  it("is documented with the admin listing's item schema, its paging parameters and 403-04", async () => {
    const doc = (await t.http.get('/docs-json')).body;
    const operation = doc.paths['/applications'].get;
    expect(operation.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/ApplicationListResponse');
    expect(doc.paths['/admin/applications'].get.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ApplicationListResponse',
    );
    expect(operation.parameters.map((parameter: { name: string; in: string }) => `${parameter.in} ${parameter.name}`).sort()).toEqual([
      'query cursor',
      'query limit',
    ]);
    expect(operation.responses['400'].description).toContain('400-03');
    expect(operation.responses['403'].description).toContain('403-04');
    expect(operation.security).toEqual([{ 'api-key': [] }]);
  });

  it("refuses a portal token (403-04): it would learn its account's other applications", async () => {
    const link = await t.http.post(`/application/${first.applications[0]}/portal_links`).set('Authorization', first.key).send({});
    expect(link.status).toBe(201);
    const res = await get('/applications', link.body.data.token);
    expectError(res, 403, '403-04');
    expect(JSON.stringify(res.body)).not.toContain(String(first.applications[1]));
  });
});
