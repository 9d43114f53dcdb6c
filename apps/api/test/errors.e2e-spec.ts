import { EventTypeRepository } from '@herald/database';
import { ERROR_DIRECTORY } from '@herald/contracts';
import { NestPinoLogger } from '@herald/runtime';
import { createTestApp, TestApp } from './support/test-app';
import { expectError } from './support/expect-error';
import { Tenant, VALID_WEBHOOK } from './support/fixtures';
import { proxyDatabase } from '@herald/testing';
import { sql } from '@herald/database/testing';

/**
 * Walks every way a request can fail outside a route's own rules, and checks each answer has
 * the PRODUCT.md §2 envelope with a code from the directory (expectError).
 */
describe('every non-2xx answer has the error envelope and a directory code', () => {
  let t: TestApp;
  let tenant: Tenant;
  let webhookPath: string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenantWithWebhook();
    webhookPath = `/application/${tenant.applicationId}/webhook`;
  });
  afterAll(() => t.close());

  it('every code in the directory has the shape NNN-NN and a message', async () => {
    const res = await t.http.get('/error_codes').set('Authorization', tenant.key);
    expect(res.body.data).toEqual(ERROR_DIRECTORY.map(({ code, message }) => ({ code, message })));
    for (const entry of res.body.data) expect(entry.code).toMatch(/^\d{3}-\d{2}$/);
  });

  describe('routing', () => {
    it.each(['/nope', '/application', '/application/1/nope', '/error_codes/400-01/more'])('404-00 for %s', async (path) => {
      expectError(await t.http.get(path).set('Authorization', tenant.key), 404, '404-00');
    });

    it('404-00 for unknown routes even without a key', async () => {
      expectError(await t.http.get('/nope'), 404, '404-00');
    });

    it.each([
      ['patch', '/application/1/webhook', 'DELETE, GET, HEAD, PUT'],
      ['post', '/error_codes', 'GET, HEAD'],
      ['delete', '/event_types', 'GET, HEAD'],
      ['get', '/admin/event_types', 'POST'],
      ['put', '/application/1/webhook/secret/rotate', 'POST'],
    ] as const)('405-00 with Allow for %s %s', async (method, path, allow) => {
      const res = await t.http[method](path).set('Authorization', tenant.key);
      expectError(res, 405, '405-00');
      expect(res.headers.allow).toBe(allow);
    });
  });

  describe('bodies', () => {
    const put = () => t.http.put(webhookPath).set('Authorization', tenant.key);

    it.each([
      ['malformed JSON', '{"url": '],
      ['a JSON array', '[]'],
      ['a JSON string', '"hello"'],
      ['JSON null', 'null'],
      ['a JSON number', '42'],
    ])('400-01 for %s', async (_, body) => {
      expectError(await put().set('Content-Type', 'application/json').send(body), 400, '400-01');
    });

    it('400-01 for no body at all, with or without a content type', async () => {
      expectError(await put(), 400, '400-01');
      expectError(await put().set('Content-Type', 'application/json'), 400, '400-01');
    });

    it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])('400-01 for Content-Type %s', async (type) => {
      expectError(await put().set('Content-Type', type).send('url=https://example.com'), 400, '400-01');
    });

    it('accepts a body of exactly 64 KiB and answers 413-00 one byte past it', async () => {
      const bodyOfSize = (size: number) => {
        const headers: Record<string, string> = {};
        for (let i = 0; i < 18; i++) headers[`X-Pad-${i}`] = 'p'.repeat(3600);
        const body = { ...VALID_WEBHOOK, headers };
        const length = Buffer.byteLength(JSON.stringify(body));
        headers['X-Pad-17'] = 'p'.repeat(3600 + size - length);
        const json = JSON.stringify(body);
        expect(Buffer.byteLength(json)).toBe(size);
        return json;
      };
      const exact = await put()
        .set('Content-Type', 'application/json')
        .send(bodyOfSize(64 * 1024));
      expect(exact.status).toBe(200);
      expectError(
        await put()
          .set('Content-Type', 'application/json')
          .send(bodyOfSize(64 * 1024 + 1)),
        413,
        '413-00',
      );
    });

    it('413-00 for a body far over every limit, refused while it streams', async () => {
      expectError(
        await put()
          .set('Content-Type', 'application/json')
          .send(`{"url":"${'x'.repeat(2_000_000)}"}`),
        413,
        '413-00',
      );
    });
  });

  describe('parameters', () => {
    it.each(['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'limit=', `cursor=${'c'.repeat(201)}`, 'unknown=1'])(
      '400-03 for /event_types?%s',
      async (query) => {
        const res = await t.http.get(`/event_types?${query}`).set('Authorization', tenant.key);
        expectError(res, 400, '400-03');
        expect(res.body.error.details).toHaveLength(1);
      },
    );
  });

  describe('request ids', () => {
    it('echoes a safe X-Request-Id and replaces an unsafe one', async () => {
      const kept = await t.http.get('/nope').set('X-Request-Id', 'trace-123.abc');
      expect(kept.body.request_id).toBe('trace-123.abc');
      const replaced = await t.http.get('/nope').set('X-Request-Id', 'has spaces and "quotes"');
      expect(replaced.body.request_id).toMatch(/^req_[0-9a-f]{16}$/);
      expect(replaced.headers['x-request-id']).toBe(replaced.body.request_id);
    });

    it('sends X-Request-Id on successful answers too', async () => {
      const res = await t.http.get('/error_codes').set('Authorization', tenant.key);
      expect(res.headers['x-request-id']).toMatch(/^req_/);
    });
  });

  describe('an unexpected exception', () => {
    it('answers 500-00 without internals and logs the error with the request id', async () => {
      const failing = await createTestApp({
        override: (builder) =>
          builder.overrideProvider(EventTypeRepository).useValue({
            list: () => Promise.reject(new Error('disk on fire at /var/lib/secret/path')),
          }),
      });
      try {
        const failingTenant = await failing.fixtures.tenant();
        const logged = jest.spyOn(NestPinoLogger.prototype, 'error');
        const res = await failing.http.get('/event_types').set('Authorization', failingTenant.key);
        expectError(res, 500, '500-00');
        expect(JSON.stringify(res.body)).not.toMatch(/disk on fire|secret\/path|at .*\.ts|Error:/);
        expect(logged).toHaveBeenCalledWith(
          expect.objectContaining({
            requestId: res.body.request_id,
            err: expect.objectContaining({ message: expect.stringContaining('disk on fire') }),
          }),
          expect.any(String),
        );
      } finally {
        await failing.close();
      }
    });
  });

  describe('the database going away', () => {
    it('survives the server killing its idle connections, and serves the next request', async () => {
      const app = await createTestApp({ databaseUrl: t.db.url });
      try {
        const path = `/application/${tenant.applicationId}/webhook`;
        expect((await app.http.get(path).set('Authorization', tenant.key)).status).toBe(200);
        const server = new URL(t.db.url);
        const admin = new URL(t.db.url);
        admin.pathname = '/postgres';
        await sql(
          admin.toString(),
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [server.pathname.slice(1)],
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        // A request that meets a dead pooled connection may fail once with 503; the process lives on.
        const statuses = [];
        for (let i = 0; i < 3; i++) statuses.push((await app.http.get(path).set('Authorization', tenant.key)).status);
        expect(statuses[statuses.length - 1]).toBe(200);
      } finally {
        await app.app.close();
      }
    });

    it('answers 503-00 with Retry-After, on routes and on /readyz, and recovers when it is back', async () => {
      const { proxy, url } = await proxyDatabase(t.db.url);
      const app = await createTestApp({ databaseUrl: url });
      try {
        const path = `/application/${tenant.applicationId}/webhook`;
        expect((await app.http.get(path).set('Authorization', tenant.key)).status).toBe(200);

        await proxy.cut();
        // The first request meets pooled connections that were cut, the second a refused connect.
        for (let attempt = 0; attempt < 2; attempt++) {
          const res = await app.http.get(path).set('Authorization', tenant.key);
          expectError(res, 503, '503-00');
          expect(res.headers['retry-after']).toBe('5');
        }
        const ready = await app.http.get('/readyz');
        expectError(ready, 503, '503-00');
        expect(ready.headers['retry-after']).toBe('5');

        await proxy.resume();
        expect((await app.http.get(path).set('Authorization', tenant.key)).status).toBe(200);
        expect((await app.http.get('/readyz')).status).toBe(200);
      } finally {
        await app.app.close();
        await proxy.cut();
      }
    });
  });
});
