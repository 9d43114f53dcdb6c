import { findErrorCode } from '@herald/contracts';
import { UlidIdGenerator } from '@herald/core';
import { ApplicationRepository, EventRepository } from '@herald/database';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { createTestApp, ADMIN_KEY, TestApp } from './support/test-app';
import { detailFields, expectError } from './support/expect-error';
import { Tenant, VALID_WEBHOOK } from './support/fixtures';
import { sql } from '@herald/database/testing';

/**
 * PRODUCT.md §2: no client input produces a 5xx, and every answer — including those the HTTP
 * layer produces before routing — is the envelope with a directory code. Each case here was a
 * 500 or a bare Fastify body once.
 */
describe('hostile input', () => {
  let t: TestApp;
  let tenant: Tenant;
  let port: number;
  let app: string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenantWithWebhook();
    app = `/application/${tenant.applicationId}`;
    await t.http.put(`${app}/webhook/subscription/acw_start`).set('Authorization', tenant.key).send({});
    const server = t.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  /** Sends bytes as they are (supertest and fetch would fix them) and reads the whole answer. */
  function rawRequest(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: any }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
      let received = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk) => (received += chunk));
      socket.on('error', reject);
      socket.on('close', () => {
        const [head, ...rest] = received.split('\r\n\r\n');
        const [statusLine, ...headerLines] = head.split('\r\n');
        const headers = Object.fromEntries(
          headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
        );
        const text = rest.join('\r\n\r\n');
        resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text ? JSON.parse(text) : undefined });
      });
    });
  }

  function expectRawError(res: { status: number; headers: Record<string, string>; body: any }, status: number, code: string): void {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(res.body).toEqual({ success: false, error: { code, message: expect.any(String) }, request_id: expect.stringMatching(/^req_/) });
    expect(res.headers['x-request-id']).toBe(res.body.request_id);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(findErrorCode(code)).toBeDefined();
  }

  describe('before routing', () => {
    it('431-00 for a 20 KB header', async () => {
      expectRawError(await rawRequest(`GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431, '431-00');
    });

    it.each([
      ['a request line that is not HTTP', 'GARBAGE\r\n\r\n'],
      ['a method HTTP does not know', 'FROB /healthz HTTP/1.1\r\nHost: a\r\n\r\n'],
      ['a Content-Length that is not a number', 'POST /admin/accounts HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n'],
      ['an HTTP/1.1 request without Host', 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n'],
    ])('400-00 for %s', async (_, bytes) => {
      expectRawError(await rawRequest(bytes), 400, '400-00');
    });

    it('an HTTP/1.0 request without Host is still served', async () => {
      const res = await rawRequest('GET /healthz HTTP/1.0\r\n\r\n');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    it.each([
      ['an authority', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'],
      ['a path', 'CONNECT /application/1/webhook HTTP/1.1\r\nHost: a\r\n\r\n'],
      ['the root', 'CONNECT / HTTP/1.1\r\nHost: a\r\n\r\n'],
      ['an asterisk', 'CONNECT * HTTP/1.1\r\nHost: a\r\n\r\n'],
    ])('405-00 with the envelope for CONNECT to %s: Herald is not a proxy', async (_, bytes) => {
      expectRawError(await rawRequest(bytes), 405, '405-00');
    });

    it('405-00 with Allow for a method HTTP knows but the route does not', async () => {
      const res = await t.http.propfind('/healthz');
      expectError(res, 405, '405-00');
      expect(res.headers.allow).toBe('GET, HEAD');
    });

    it('400-03 for bad percent-encoding in the path and in the query', async () => {
      expectError(await t.http.get('/error_codes/%E0%A4%A').set('Authorization', tenant.key), 400, '400-03');
      expectError(await t.http.get('/error_codes/%FF').set('Authorization', tenant.key), 400, '400-03');
      expectError(await t.http.get('/event_types?cursor=%E0%A4%A').set('Authorization', tenant.key), 400, '400-03');
      expectError(await t.http.get(`${app}/deliveries?event=%C0`).set('Authorization', tenant.key), 400, '400-03');
    });

    it('an over-long path parameter is the route own 404 up to 1 KiB, and 414-00 past it', async () => {
      expectError(await t.http.get(`/error_codes/${'a'.repeat(101)}`).set('Authorization', tenant.key), 404, '404-04');
      expectError(await t.http.get(`${app}/deliveries/dlv_${'a'.repeat(900)}`).set('Authorization', tenant.key), 404, '404-05');
      expectError(await t.http.get(`/error_codes/${'a'.repeat(1025)}`).set('Authorization', tenant.key), 414, '414-00');
      expectError(await t.http.get(`/event_types?cursor=${'a'.repeat(9000)}`).set('Authorization', tenant.key), 414, '414-00');
    });

    it('does not echo kilobytes of input back in a message', async () => {
      const res = await t.http.get(`/error_codes/${'a'.repeat(1000)}`).set('Authorization', tenant.key);
      expectError(res, 404, '404-04');
      expect(res.body.error.message.length).toBeLessThan(120);
      const unknown = await t.http.get(`/nope/${'b'.repeat(1000)}/${'c'.repeat(1000)}`).set('Authorization', tenant.key);
      expectError(unknown, 404, '404-00');
      expect(unknown.body.error.message.length).toBeLessThan(120);
    });
  });

  describe('bodies', () => {
    it('reads a body that starts with a byte-order mark, and refuses bytes that are not UTF-8 (400-01)', async () => {
      // fetch sends a Buffer as its bytes (supertest would serialise it as JSON).
      const post = (bytes: Buffer) =>
        fetch(`http://127.0.0.1:${port}/admin/accounts`, {
          method: 'POST',
          headers: { authorization: ADMIN_KEY, 'content-type': 'application/json' },
          body: bytes,
        });
      expect((await post(Buffer.from('\ufeff{"name":"bom"}'))).status).toBe(201);
      const latin1 = await post(Buffer.from('{"name":"caf\xe9"}', 'latin1'));
      expect(latin1.status).toBe(400);
      expect(((await latin1.json()) as { error: unknown }).error).toEqual({
        code: '400-01',
        message: 'The request body is not valid UTF-8.',
      });
    });

    it('keeps an answer small however many fields are wrong, and cuts long field names', async () => {
      const many = `{${Array.from({ length: 500 }, (_, i) => `"f${i}":1`).join(',')}}`;
      const res = await t.http.post('/admin/accounts').set('Authorization', ADMIN_KEY).set('Content-Type', 'application/json').send(many);
      expectError(res, 400, '400-02');
      expect(res.body.error.details).toHaveLength(20);
      expect(res.body.error.message).toMatch(/and \d+ more/);
      const long = await t.http
        .post('/admin/accounts')
        .set('Authorization', ADMIN_KEY)
        .send({ name: 'x', ['k'.repeat(60_000)]: 1 });
      expectError(long, 400, '400-02');
      expect(long.text.length).toBeLessThan(2_000); // it would be 180 KB: the name three times over
    });

    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

    it('400-01 for JSON nested deeper than 32 levels, however deep', async () => {
      for (const depth of [32, 2_000, 100_000]) {
        const res = await t.http
          .post(`${app}/events`)
          .set('Authorization', tenant.key)
          .set('Content-Type', 'application/json')
          .send(`{"event":"acw_start","payload":{"deep":${nested(depth)}}}`);
        expectError(res, 400, '400-01');
        expect(res.body.error.message).toMatch(/deeper than 32 levels/);
      }
    });

    it('accepts a payload that reaches exactly 32 levels', async () => {
      // The body is level 1, the payload 2, "deep" starts at 3: 30 arrays reach level 32.
      const res = await t.http
        .post(`${app}/events`)
        .set('Authorization', tenant.key)
        .set('Content-Type', 'application/json')
        .send(`{"event":"acw_start","payload":{"deep":${nested(30)}}}`);
      expect(res.status).toBe(202);
    });

    it.each([
      ['application/json; charset=utf-16', undefined],
      ['application/json; charset=latin1', undefined],
      ['application/json', 'gzip'],
      ['application/json', 'br, identity'],
    ])('415-00 for Content-Type %s with Content-Encoding %s', async (type, encoding) => {
      const req = t.http.post('/admin/accounts').set('Authorization', ADMIN_KEY).set('Content-Type', type);
      if (encoding) req.set('Content-Encoding', encoding);
      expectError(await req.send('{"name":"x"}'), 415, '415-00');
    });

    it('accepts an explicit UTF-8 charset and an identity encoding', async () => {
      const res = await t.http
        .post('/admin/accounts')
        .set('Authorization', ADMIN_KEY)
        .set('Content-Type', 'application/json; charset=UTF-8')
        .set('Content-Encoding', 'identity')
        .send('{"name":"x"}');
      expect(res.status).toBe(201);
    });

    it('refuses __proto__ as a field of Herald own objects, as an unknown field', async () => {
      const res = await t.http
        .post('/admin/accounts')
        .set('Authorization', ADMIN_KEY)
        .set('Content-Type', 'application/json')
        .send('{"__proto__":{"admin":true},"name":"x"}');
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toEqual(['__proto__']);
    });

    it.each([
      ['{"name":{"constructor":"x"}}', 'name.constructor'],
      ['{"prototype":{"constructor":"x"},"name":"x"}', 'prototype'],
      ['{"name":"x","constructor":{"name":"y"}}', 'constructor'],
    ])('refuses %s as an unknown field, not a 500 (found by the fuzz suite)', async (body, field) => {
      const res = await t.http.post('/admin/accounts').set('Authorization', ADMIN_KEY).set('Content-Type', 'application/json').send(body);
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toContain(field);
    });

    it.each(Object.getOwnPropertyNames(Object.prototype))(
      'refuses %s in the webhook body and in its retry_config as an unknown field (400-02), never dropping it',
      async (name) => {
        for (const [body, field] of [
          [{ ...VALID_WEBHOOK, [name]: 1 }, name],
          [{ ...VALID_WEBHOOK, retry_config: { ...VALID_WEBHOOK.retry_config, [name]: { x: 1 } } }, `retry_config.${name}`],
        ] as const) {
          const res = await t.http
            .put(`${app}/webhook`)
            .set('Authorization', tenant.key)
            .set('Content-Type', 'application/json')
            .send(JSON.stringify(body));
          expectError(res, 400, '400-02');
          expect(detailFields(res)).toEqual([field]);
        }
      },
    );

    it('refuses an Object.prototype name as a query parameter (400-03)', async () => {
      const res = await t.http.get(`${app}/deliveries?toString=1`).set('Authorization', tenant.key);
      expectError(res, 400, '400-03');
      expect(detailFields(res)).toEqual(['toString']);
    });

    it('keeps a payload whose keys are Object.prototype names exactly as sent', async () => {
      const payload = '{"__proto__":{"polluted":true},"constructor":{"prototype":1},"toString":"x","hasOwnProperty":"y","valueOf":null}';
      const res = await t.http
        .post(`${app}/events`)
        .set('Authorization', tenant.key)
        .set('Content-Type', 'application/json')
        .send(`{"event":"acw_start","payload":${payload}}`);
      expect(res.status).toBe(202);
      const [stored] = await sql<{ payload: string }>(t.db.url, 'SELECT payload FROM events WHERE id = $1', [res.body.data.id]);
      expect(stored.payload).toBe(payload);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe('control characters (400-02 naming the field, 400-03 in a query, the route 404 in a path)', () => {
    it.each([
      ['/admin/accounts', { name: 'a\u0000b' }, 'name'],
      ['/admin/accounts', { name: 'line\nbreak' }, 'name'],
      ['/admin/api_keys', () => ({ account_id: tenant.accountId, name: 'k\u0007' }), 'name'],
      ['/admin/applications', () => ({ name: 'a\u0000', account_id: tenant.accountId }), 'name'],
      ['/admin/event_types', { name: 'ok_name', description: 'bad\u0000' }, 'description'],
    ])('POST %s', async (path, body, field) => {
      const res = await t.http
        .post(path)
        .set('Authorization', ADMIN_KEY)
        .send(typeof body === 'function' ? body() : body);
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toEqual([field]);
    });

    it.each([
      [{ event: 'acw_start\u0000', payload: {} }, 'event'],
      [{ event: 'acw_start', payload: {}, idempotency_key: 'key\u0000' }, 'idempotency_key'],
    ])('publishing %p', async (body, field) => {
      const res = await t.http.post(`${app}/events`).set('Authorization', tenant.key).send(body);
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toEqual([field]);
    });

    it('keeps control characters inside a payload: it is the customer data', async () => {
      const res = await t.http
        .post(`${app}/events`)
        .set('Authorization', tenant.key)
        .send({ event: 'acw_start', payload: { note: 'a\u0000b\nc' } });
      expect(res.status).toBe(202);
      const [stored] = await sql<{ payload: string }>(t.db.url, 'SELECT payload FROM events WHERE id = $1', [res.body.data.id]);
      expect(JSON.parse(stored.payload)).toEqual({ note: 'a\u0000b\nc' });
    });

    it('a webhook URL with a NUL is 400-05', async () => {
      const res = await t.http
        .put(`${app}/webhook`)
        .set('Authorization', tenant.key)
        .send({ url: 'https://example.com/\u0000', retry_enabled: 0 });
      expectError(res, 400, '400-05');
    });

    it.each([
      ['put', '/webhook/subscription/acw%00start', 400, '400-04'],
      ['delete', '/webhook/subscription/acw%00start', 404, '404-03'],
      ['get', '/deliveries/dlv_%00', 404, '404-05'],
      ['post', '/deliveries/dlv_%00/retry', 404, '404-05'],
    ] as const)('%s %s answers %d %s', async (method, path, status, code) => {
      const res = await t.http[method](`${app}${path}`)
        .set('Authorization', tenant.key)
        .send(method === 'put' ? {} : undefined);
      expectError(res, status, code);
    });

    it('DELETE /admin/api_keys/<junk> is 404-06, GET /error_codes/<junk> is 404-04', async () => {
      expectError(await t.http.delete('/admin/api_keys/key_%00').set('Authorization', ADMIN_KEY), 404, '404-06');
      expectError(await t.http.get('/error_codes/400-0%00').set('Authorization', ADMIN_KEY), 404, '404-04');
    });

    it.each(['/deliveries?cursor=dlv_%00', '/deliveries?event=acw%00start', '/deliveries?status=failed%00'])(
      'GET %s is 400-03',
      async (path) => {
        expectError(await t.http.get(`${app}${path}`).set('Authorization', tenant.key), 400, '400-03');
      },
    );
  });

  describe('cursors Herald did not issue are 400-03, never ignored', () => {
    it.each([
      `/deliveries?cursor=garbage`,
      `/deliveries?cursor=evt_01jd8x6q3k2m4n5p6r7s8t9v0w`,
      `/deliveries?cursor=dlv_01jd8x6q3k2m4n5p6r7s8t9v0w&cursor=dlv_01jd8x6q3k2m4n5p6r7s8t9v0w`,
    ])('GET /application/{id}%s', async (path) => {
      expectError(await t.http.get(`${app}${path}`).set('Authorization', tenant.key), 400, '400-03');
    });

    it('GET /event_types with a cursor that is not an event type name', async () => {
      expectError(await t.http.get('/event_types?cursor=NOT%20A%20NAME').set('Authorization', tenant.key), 400, '400-03');
    });

    it('GET /event_types with a cursor shaped like a name that it never issued (no such event type)', async () => {
      const res = await t.http.get('/event_types?cursor=garbage').set('Authorization', tenant.key);
      expectError(res, 400, '400-03');
      expect(detailFields(res)).toEqual(['cursor']);
    });

    it('a cursor Herald issued still pages', async () => {
      const first = await t.http.get('/event_types?limit=1').set('Authorization', tenant.key);
      const second = await t.http.get(`/event_types?limit=1&cursor=${first.body.next_cursor}`).set('Authorization', tenant.key);
      expect(second.status).toBe(200);
      expect(second.body.data[0].name > first.body.data[0].name).toBe(true);
    });
  });

  describe('one request bad input never fails another', () => {
    it('a row PostgreSQL refuses fails alone: the rest of its micro-batch commits', async () => {
      const other = await t.fixtures.tenantWithWebhook();
      const applications = t.app.get(ApplicationRepository);
      const scope = applications.scopeOf((await applications.findById(other.applicationId))!);
      const ids = new UlidIdGenerator();
      const event = (eventType: string) => ({
        id: ids.next('evt'),
        eventType,
        payload: '{}',
        createdAt: new Date(),
        deliveryId: ids.next('dlv'),
        ignoresSubscription: true,
        filteredOut: false,
        traceContext: null,
        idempotencyKey: null,
        orderingKey: null,
      });
      const events = t.app.get(EventRepository);
      // The first submit is written alone; the rest queue up behind it and share one statement.
      const outcomes = await Promise.allSettled([
        ...Array.from({ length: 15 }, () => events.publish(scope, event('acw_start'))),
        events.publish(scope, event('acw\u0000start')), // SQLSTATE 22021: text cannot hold NUL
        ...Array.from({ length: 15 }, () => events.publish(scope, event('acw_start'))),
      ]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual([
        ...Array(15).fill('fulfilled'),
        'rejected',
        ...Array(15).fill('fulfilled'),
      ]);
      const [count] = await sql<{ n: string }>(t.db.url, 'SELECT count(*) AS n FROM events WHERE application_id = $1', [
        other.applicationId,
      ]);
      expect(Number(count.n)).toBe(30);
    });

    it('a publish refused for a NUL, alongside a burst of valid publishes from another tenant, fails alone', async () => {
      const other = await t.fixtures.tenantWithWebhook();
      await t.http.put(`/application/${other.applicationId}/webhook/subscription/acw_start`).set('Authorization', other.key).send({});
      const good = Array.from({ length: 40 }, (_, i) =>
        t.http
          .post(`/application/${other.applicationId}/events`)
          .set('Authorization', other.key)
          .send({ event: 'acw_start', payload: { i } }),
      );
      const bad = Array.from({ length: 10 }, () =>
        t.http.post(`${app}/events`).set('Authorization', tenant.key).send({ event: 'acw_start', payload: {}, idempotency_key: 'k\u0000' }),
      );
      const unknown = Array.from({ length: 10 }, () =>
        t.http.post(`${app}/events`).set('Authorization', tenant.key).send({ event: 'no_such_event', payload: {} }),
      );
      const [goodRes, badRes, unknownRes] = await Promise.all([Promise.all(good), Promise.all(bad), Promise.all(unknown)]);
      expect(goodRes.map((res) => res.status)).toEqual(good.map(() => 202));
      badRes.forEach((res) => expectError(res, 400, '400-02'));
      unknownRes.forEach((res) => expectError(res, 400, '400-04'));
      const [count] = await sql<{ n: string }>(t.db.url, 'SELECT count(*) AS n FROM events WHERE application_id = $1', [
        other.applicationId,
      ]);
      expect(Number(count.n)).toBe(40);
    });
  });
});
