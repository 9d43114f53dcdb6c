import { hashApiKey } from '@herald/core';
import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';
import { expectError } from './support/expect-error';
import { Tenant, VALID_WEBHOOK } from './support/fixtures';
import { sql } from '@herald/database/testing';

type Method = 'get' | 'put' | 'post' | 'delete';
interface Route {
  method: Method;
  path: (applicationId: number | string) => string;
  body?: object;
}

/** Every route under /application/{application_id}; the last test checks the list is complete. */
const TENANT_ROUTES: Route[] = [
  { method: 'put', path: (id) => `/application/${id}/webhook`, body: VALID_WEBHOOK },
  { method: 'get', path: (id) => `/application/${id}/webhook` },
  { method: 'get', path: (id) => `/application/${id}/webhook/retry_schedule` },
  { method: 'put', path: (id) => `/application/${id}/webhook/throttle`, body: { per_second: 20 } },
  { method: 'get', path: (id) => `/application/${id}/webhook/throttle` },
  { method: 'get', path: (id) => `/application/${id}/webhook/status` },
  { method: 'post', path: (id) => `/application/${id}/webhook/disable` },
  { method: 'post', path: (id) => `/application/${id}/webhook/enable` },
  { method: 'get', path: (id) => `/application/${id}/webhook/secret` },
  { method: 'post', path: (id) => `/application/${id}/webhook/secret/rotate` },
  { method: 'get', path: (id) => `/application/${id}/webhook/subscription` },
  { method: 'put', path: (id) => `/application/${id}/webhook/subscription/acw_start`, body: {} },
  { method: 'get', path: (id) => `/application/${id}/webhook/subscription/acw_start/filter` },
  { method: 'put', path: (id) => `/application/${id}/webhook/subscription/acw_start/filter`, body: { filter: { n: 1 } } },
  { method: 'post', path: (id) => `/application/${id}/webhook/subscription/acw_start/filter/test`, body: {} },
  { method: 'delete', path: (id) => `/application/${id}/webhook/subscription/acw_start/filter` },
  { method: 'delete', path: (id) => `/application/${id}/webhook/subscription/acw_start` },
  { method: 'post', path: (id) => `/application/${id}/events`, body: { event: 'acw_start', payload: {} } },
  { method: 'post', path: (id) => `/application/${id}/events/batch`, body: { events: [{ event: 'acw_start', payload: {} }] } },
  { method: 'post', path: (id) => `/application/${id}/webhook/test` },
  { method: 'get', path: (id) => `/application/${id}/deliveries` },
  { method: 'get', path: (id) => `/application/${id}/deliveries/counts` },
  { method: 'get', path: (id) => `/application/${id}/deliveries/dlv_missing` },
  { method: 'post', path: (id) => `/application/${id}/deliveries/dlv_missing/retry` },
  { method: 'post', path: (id) => `/application/${id}/deliveries/recover`, body: { since: '2026-01-01T00:00:00Z' } },
  { method: 'get', path: (id) => `/application/${id}/events` },
  { method: 'get', path: (id) => `/application/${id}/events/evt_missing` },
  { method: 'post', path: (id) => `/application/${id}/events/evt_missing/replay` },
  { method: 'post', path: (id) => `/application/${id}/portal_links`, body: {} },
  { method: 'delete', path: (id) => `/application/${id}/portal_links` },
  { method: 'get', path: (id) => `/application/${id}/audit` },
  { method: 'get', path: (id) => `/application/${id}/stats` },
  { method: 'delete', path: (id) => `/application/${id}/webhook` },
  { method: 'get', path: (id) => `/application/${id}` },
];

const ADMIN_ROUTES: Route[] = [
  { method: 'post', path: () => '/admin/accounts', body: { name: 'x' } },
  { method: 'post', path: () => '/admin/applications', body: { name: 'x', account_id: 'acc_00000000000000000000000000' } },
  { method: 'post', path: () => '/admin/api_keys', body: { name: 'x', account_id: 'acc_00000000000000000000000000' } },
  { method: 'delete', path: () => '/admin/api_keys/key_missing' },
  { method: 'post', path: () => '/admin/event_types', body: { name: 'some_event' } },
  { method: 'put', path: () => '/admin/operational_webhook', body: { url: 'https://ops.example.com/hook' } },
  { method: 'get', path: () => '/admin/operational_webhook' },
  { method: 'delete', path: () => '/admin/operational_webhook' },
  { method: 'get', path: () => '/admin/operational_webhook/secret' },
  { method: 'get', path: () => '/admin/audit' },
];

const describeRoute = (route: Route) => `${route.method.toUpperCase()} ${route.path('{id}')}`;

describe('authentication and tenancy (PRODUCT.md §1)', () => {
  let t: TestApp;
  let owner: Tenant;
  let stranger: Tenant;
  let revokedKey: string;

  const call = (route: Route, applicationId: number | string, authorization?: string) => {
    let req = t.http[route.method](route.path(applicationId)).set('Content-Type', 'application/json');
    if (authorization !== undefined) req = req.set('Authorization', authorization);
    return route.body ? req.send(route.body) : req;
  };

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.fixtures.tenantWithWebhook();
    stranger = await t.fixtures.tenant();
    const revoked = await t.fixtures.apiKey(owner.accountId);
    await t.http.delete(`/admin/api_keys/${revoked.id}`).set('Authorization', ADMIN_KEY).expect(200);
    revokedKey = revoked.key;
  });
  afterAll(() => t.close());

  describe.each(TENANT_ROUTES.map((route) => [describeRoute(route), route] as const))('%s', (_, route) => {
    it('403-01 without a key, and with an empty one', async () => {
      expectError(await call(route, owner.applicationId), 403, '403-01');
      expectError(await call(route, owner.applicationId, '   '), 403, '403-01');
    });

    it('403-02 with an unknown, a malformed or a revoked key', async () => {
      expectError(await call(route, owner.applicationId, `hk_${'A'.repeat(43)}`), 403, '403-02');
      expectError(await call(route, owner.applicationId, 'not-a-key'), 403, '403-02');
      expectError(await call(route, owner.applicationId, revokedKey), 403, '403-02');
    });

    it('403-03 with the key of another account', async () => {
      expectError(await call(route, owner.applicationId, stranger.key), 403, '403-03');
    });

    it('404-01 for an application that does not exist, whoever asks', async () => {
      expectError(await call(route, 2_000_000_000, stranger.key), 404, '404-01');
      expectError(await call(route, 2_000_000_000, ADMIN_KEY), 404, '404-01');
    });

    it('400-03 for an application id that is not an integer from 1 to 2147483647', async () => {
      for (const id of ['abc', '0', '-1', '1.5', '2147483648', '01']) {
        const res = await call(route, id, owner.key);
        expectError(res, 400, '400-03');
        expect(res.body.error.details).toEqual([{ field: 'application_id', message: expect.stringContaining(id) }]);
      }
    });

    it('lets the owner in, with a plain or a Bearer key, and an admin key on any application', async () => {
      for (const authorization of [owner.key, `Bearer ${owner.key}`, `bearer ${owner.key}`, ADMIN_KEY]) {
        const res = await call(route, owner.applicationId, authorization);
        expect(res.body?.error?.code ?? 'ok').not.toMatch(/^403|^404-01|^400-03/);
      }
    });
  });

  describe.each(ADMIN_ROUTES.map((route) => [describeRoute(route), route] as const))('%s', (_, route) => {
    it('403-01 without a key, 403-02 with a bad one, 403-04 with an account key', async () => {
      expectError(await call(route, 0), 403, '403-01');
      expectError(await call(route, 0, revokedKey), 403, '403-02');
      expectError(await call(route, 0, owner.key), 403, '403-04');
    });
  });

  it.each(['/error_codes', '/error_codes/400-01', '/event_types', '/applications'])('GET %s needs a key of any scope', async (path) => {
    expectError(await t.http.get(path), 403, '403-01');
    expect((await t.http.get(path).set('Authorization', owner.key)).status).toBe(200);
    expect((await t.http.get(path).set('Authorization', ADMIN_KEY)).status).toBe(200);
  });

  it.each(['/healthz', '/readyz', '/docs', '/docs-json'])('GET %s answers without a key', async (path) => {
    expect((await t.http.get(path)).status).toBe(200);
  });

  describe('API keys', () => {
    it('are hk_ + 43 url-safe characters, shown once and stored only as a SHA-256 hash', async () => {
      const res = await t.http.post('/admin/api_keys').set('Authorization', ADMIN_KEY).send({ account_id: owner.accountId, name: 'ci' });
      expect(res.status).toBe(201);
      const { id, key } = res.body.data;
      expect(key).toMatch(/^hk_[A-Za-z0-9_-]{43}$/);
      expect(res.body.data).toEqual({
        id,
        name: 'ci',
        key,
        prefix: key.slice(0, 9),
        account_id: owner.accountId,
        scope: 'account',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        revoked_at: null,
      });

      const rows = await sql(t.db.url, 'SELECT * FROM api_keys WHERE id = $1', [id]);
      expect(rows).toHaveLength(1);
      expect(rows[0].key_hash).toBe(hashApiKey(key));
      expect(JSON.stringify(rows[0])).not.toContain(key);
    });

    it('stop working on the very next request once revoked, and revoking twice keeps the first time', async () => {
      const { id, key } = await t.fixtures.apiKey(owner.accountId);
      const configure = () => t.http.put(`/application/${owner.applicationId}/webhook`).set('Authorization', key).send(VALID_WEBHOOK);
      expect((await configure()).status).toBe(200);
      const first = await t.http.delete(`/admin/api_keys/${id}`).set('Authorization', ADMIN_KEY);
      expect(first.status).toBe(200);
      expect(first.body.data).toMatchObject({ id, revoked_at: expect.any(String) });
      expect(first.body.data).not.toHaveProperty('key');
      expectError(await configure(), 403, '403-02');
      const again = await t.http.delete(`/admin/api_keys/${id}`).set('Authorization', ADMIN_KEY);
      expect(again.body.data.revoked_at).toBe(first.body.data.revoked_at);
    });

    it('are refused at once by every api process once revoked, though each caches valid keys', async () => {
      const other = await createTestApp({ databaseUrl: t.db.url });
      try {
        const { id, key } = await t.fixtures.apiKey(owner.accountId);
        const read = (app: TestApp) => app.http.get(`/application/${owner.applicationId}/webhook/subscription`).set('Authorization', key);
        expect((await read(other)).status).not.toBe(403);
        expect((await read(t)).status).not.toBe(403);
        await t.http.delete(`/admin/api_keys/${id}`).set('Authorization', ADMIN_KEY).expect(200);
        expectError(await read(t), 403, '403-02');
        // The other process had the key cached; the revocation's NOTIFY evicts it there.
        let answer = await read(other);
        for (let tries = 0; answer.status !== 403 && tries < 20; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          answer = await read(other);
        }
        expectError(answer, 403, '403-02');
      } finally {
        await other.app.close();
      }
    });

    it('answers 404-06 when revoking a key that does not exist', async () => {
      expectError(await t.http.delete('/admin/api_keys/key_nope').set('Authorization', ADMIN_KEY), 404, '404-06');
    });
  });

  describe('HERALD_ADMIN_KEY bootstrap', () => {
    it('is an admin key while set; changing or removing it retires the previous one', async () => {
      const replacement = 'replacement-admin-key-000000000000';
      const second = await createTestApp({ databaseUrl: t.db.url, env: { HERALD_ADMIN_KEY: replacement } });
      try {
        expect((await second.http.post('/admin/accounts').set('Authorization', replacement).send({ name: 'n' })).status).toBe(201);
        expectError(await second.http.post('/admin/accounts').set('Authorization', ADMIN_KEY).send({ name: 'n' }), 403, '403-02');
      } finally {
        await second.app.close();
      }
      const none = await createTestApp({ databaseUrl: t.db.url, env: { HERALD_ADMIN_KEY: '' } });
      try {
        expectError(await none.http.post('/admin/accounts').set('Authorization', replacement).send({ name: 'n' }), 403, '403-02');
      } finally {
        await none.app.close();
      }
      // Restore the key this file's other tests use.
      const restored = await createTestApp({ databaseUrl: t.db.url });
      await restored.app.close();
      expect((await t.http.post('/admin/accounts').set('Authorization', ADMIN_KEY).send({ name: 'n' })).status).toBe(201);
    });
  });

  it('TENANT_ROUTES lists every /application/{application_id} operation of the OpenAPI document', async () => {
    const doc = (await t.http.get('/docs-json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/application/{application_id}'))
      .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    const tested = TENANT_ROUTES.map((route) => `${route.method.toUpperCase()} ${route.path('{application_id}')}`)
      .map((entry) =>
        entry
          .replace('/subscription/acw_start', '/subscription/{subscription}')
          .replace('/dlv_missing', '/{delivery_id}')
          .replace('/evt_missing', '/{event_id}'),
      )
      .sort();
    expect(tested).toEqual(documented);
  });
});
