import { Clock, CLOCK, hashApiKey } from '@herald/core';
import { sql } from '@herald/database/testing';
import { detailFields, expectError } from './support/expect-error';
import { Tenant, VALID_WEBHOOK } from './support/fixtures';
import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';

/** A clock the test moves by hand, so expiry is tested to the millisecond without waiting. */
class ManualClock implements Clock {
  private ms = Date.now();
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
interface Operation {
  method: Method;
  /** The OpenAPI path, e.g. /application/{application_id}/webhook. */
  path: string;
}

const HOUR_MS = 3_600_000;
const NO_SUCH_APPLICATION = 2_000_000_000;

/** PRODUCT.md §12, the customer portal: POST/DELETE /application/{id}/portal_links and what a portal token may do. */
/**
 * Everything a portal token may do on its own application (PRODUCT.md §12: the customer manages
 * their own webhook). Every other tenant operation must refuse it with 403-04, so a route added
 * later fails this file until someone decides whether a customer may call it. Publishing is the
 * platform's: a link that could publish would send signed events and take its idempotency keys.
 */
const PORTAL_TENANT_OPERATIONS: ReadonlySet<string> = new Set(
  [
    'get /webhook',
    'put /webhook',
    'delete /webhook',
    'get /webhook/retry_schedule',
    'get /webhook/secret',
    'post /webhook/secret/rotate',
    'get /webhook/subscription',
    'put /webhook/subscription/{subscription}',
    'delete /webhook/subscription/{subscription}',
    // A subscription's filter: PRODUCT.md §14 has the portal edit, test and remove it.
    'get /webhook/subscription/{subscription}/filter',
    'put /webhook/subscription/{subscription}/filter',
    'delete /webhook/subscription/{subscription}/filter',
    'post /webhook/subscription/{subscription}/filter/test',
    'get /webhook/status',
    'post /webhook/disable',
    'post /webhook/enable',
    'get /webhook/throttle',
    'put /webhook/throttle',
    'post /webhook/test',
    'get /events',
    'get /events/{event_id}',
    'post /events/{event_id}/replay',
    'get /deliveries',
    'get /deliveries/counts',
    'get /deliveries/{delivery_id}',
    'post /deliveries/{delivery_id}/retry',
    'post /deliveries/recover',
    // Its audit log (PRODUCT.md §16: the application's keys and portal links).
    'get /audit',
    // Its delivery statistics (PRODUCT.md §16: the console and the portal draw them).
    'get /stats',
  ]
    .map((operation) => operation.replace(' /', ' /application/{application_id}/'))
    // The application itself (its name and the link's expiry: the portal's header).
    .concat('get /application/{application_id}'),
);

describe('customer portal links (POST/DELETE /application/{id}/portal_links)', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let owner: Tenant;
  /** Another application of the owner's own account: a portal token must not reach it either. */
  let siblingApplicationId: number;
  let stranger: Tenant;

  const linksPath = (applicationId: number) => `/application/${applicationId}/portal_links`;
  const createLink = (body: unknown = {}, authorization = owner.key, applicationId = owner.applicationId) =>
    t.http
      .post(linksPath(applicationId))
      .set('Authorization', authorization)
      .send(body as object);
  const revokeLinks = (authorization = owner.key, applicationId = owner.applicationId) =>
    t.http.delete(linksPath(applicationId)).set('Authorization', authorization);
  /** A new link's token for the owner's application. */
  const newToken = async (body: object = {}, applicationId = owner.applicationId): Promise<string> => {
    const res = await createLink(body, ADMIN_KEY, applicationId);
    if (res.status !== 201) throw new Error(`creating a portal link failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data.token;
  };
  const readSecret = (token: string, applicationId = owner.applicationId) =>
    t.http.get(`/application/${applicationId}/webhook/secret`).set('Authorization', token);

  beforeAll(async () => {
    t = await createTestApp({ override: (builder) => builder.overrideProvider(CLOCK).useValue(clock) });
    owner = await t.fixtures.tenantWithWebhook();
    siblingApplicationId = await t.fixtures.application(owner.accountId);
    stranger = await t.fixtures.tenantWithWebhook();
  });
  afterAll(() => t.close());

  describe('creating a link', () => {
    it('answers 201 with the url, the token and expires_at an hour from now; the token is in the fragment and stored only as SHA-256', async () => {
      const createdAt = clock.now();
      const res = await createLink();
      expect(res.status).toBe(201);
      const { token } = res.body.data;
      expect(token).toMatch(/^hp_[A-Za-z0-9_-]{43}$/);
      expect(res.body).toEqual({
        success: true,
        data: {
          url: `/console/#/portal?application_id=${owner.applicationId}&token=${token}`,
          token,
          expires_at: new Date(createdAt.getTime() + HOUR_MS).toISOString(),
        },
      });
      // Everything a server would see of the url (the part before '#') is free of the token.
      const [beforeFragment] = res.body.data.url.split('#');
      expect(beforeFragment).toBe('/console/');

      const rows = await sql(t.db.url, 'SELECT * FROM portal_links WHERE token_hash = $1', [hashApiKey(token)]);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        id: expect.stringMatching(/^ptl_[0-9a-z]{26}$/),
        application_id: owner.applicationId,
        revoked_at: null,
        created_at: createdAt,
        expires_at: new Date(createdAt.getTime() + HOUR_MS),
      });
      expect(JSON.stringify(rows[0])).not.toContain(token.slice(3));
    });

    it('takes expires_in_seconds from 60 to 86400, each link with a token of its own', async () => {
      const made: string[] = [];
      for (const seconds of [60, 61, 86_399, 86_400]) {
        const res = await createLink({ expires_in_seconds: seconds });
        expect(res.status).toBe(201);
        expect(res.body.data.expires_at).toBe(new Date(clock.now().getTime() + seconds * 1000).toISOString());
        made.push(res.body.data.token);
      }
      expect(new Set(made).size).toBe(made.length);
    });

    it('may be made with the account key, plain or Bearer, or with an admin key', async () => {
      for (const authorization of [owner.key, `Bearer ${owner.key}`, ADMIN_KEY, `Bearer ${ADMIN_KEY}`]) {
        expect((await createLink({}, authorization)).status).toBe(201);
      }
    });

    it('answers 400-02 naming expires_in_seconds when it is out of range or not an integer', async () => {
      for (const [value, message] of [
        [59, 'expires_in_seconds must not be less than 60'],
        [86_401, 'expires_in_seconds must not be greater than 86400'],
        [0, 'expires_in_seconds must not be less than 60'],
        [-3600, 'expires_in_seconds must not be less than 60'],
        ['3600', 'expires_in_seconds must be an integer (got a string)'],
        [90.5, 'expires_in_seconds must be an integer (got the fraction 90.5)'],
        [null, 'expires_in_seconds must be an integer (got null)'],
      ] as const) {
        const res = await createLink({ expires_in_seconds: value });
        expectError(res, 400, '400-02');
        expect(res.body.error.details).toEqual([{ field: 'expires_in_seconds', message }]);
      }
    });

    it('answers 400-02 naming a field it does not know, and 400-01 without a JSON object', async () => {
      const unknown = await createLink({ expires_in_seconds: 120, application_id: 7 });
      expectError(unknown, 400, '400-02');
      expect(detailFields(unknown)).toEqual(['application_id']);

      expectError(await t.http.post(linksPath(owner.applicationId)).set('Authorization', owner.key), 400, '400-01');
      expectError(await createLink([60]), 400, '400-01');
    });

    it('answers 403-03 to another account’s key and 404-01 for an application that does not exist', async () => {
      expectError(await createLink({}, stranger.key), 403, '403-03');
      expectError(await revokeLinks(stranger.key), 403, '403-03');
      expectError(await createLink({}, owner.key, NO_SUCH_APPLICATION), 404, '404-01');
    });
  });

  describe('a portal token', () => {
    it("works, plain or Bearer, on its application's tenant routes, writes included", async () => {
      const token = await newToken();
      const as = (authorization: string) => ({ Authorization: authorization });
      const base = `/application/${owner.applicationId}`;

      const webhook = { ...VALID_WEBHOOK, url: 'https://example.com/hooks/from-the-portal' };
      const put = await t.http.put(`${base}/webhook`).set(as(token)).send(webhook);
      expect(put.status).toBe(200);
      expect(put.body.data.url).toBe(webhook.url);
      expect((await t.http.get(`${base}/webhook`).set(as(`Bearer ${token}`))).body.data.url).toBe(webhook.url);

      const subscribed = await t.http.put(`${base}/webhook/subscription/acw_start`).set(as(token)).send({ ensure_delivery: true });
      expect(subscribed.status).toBe(200);
      expect(subscribed.body.subscriptions).toHaveProperty('acw_start');

      const test = await t.http.post(`${base}/webhook/test`).set(as(token));
      expect(test.status).toBe(202);
      const deliveries = await t.http.get(`${base}/deliveries`).set(as(token));
      expect(deliveries.status).toBe(200);
      expect(test.body.data.deliveries).toHaveLength(1);
      expect(deliveries.body.data.map((delivery: { id: string }) => delivery.id)).toContain(test.body.data.deliveries[0]);

      for (const path of ['/webhook/secret', '/webhook/status', '/webhook/retry_schedule', '/webhook/throttle', '/events']) {
        expect({ path, status: (await t.http.get(`${base}${path}`).set(as(token))).status }).toEqual({ path, status: 200 });
      }
      expect((await t.http.put(`${base}/webhook/throttle`).set(as(token)).send({ per_second: 50 })).status).toBe(200);
      expect((await t.http.put(`${base}/webhook/throttle`).set(as(token)).send({ per_second: null })).status).toBe(200);
    });

    it('reads the event-type and error-code catalogues the console shows', async () => {
      const token = await newToken();
      for (const path of ['/event_types', '/error_codes', '/error_codes/403-03']) {
        expect({ path, status: (await t.http.get(path).set('Authorization', token)).status }).toEqual({ path, status: 200 });
      }
    });

    it('is refused on every other application, every admin route, the application list and portal_links itself (every operation of the OpenAPI document)', async () => {
      // Its own application, so walking every route (a DELETE webhook among them) disturbs no other test.
      const tenant = await t.fixtures.tenantWithWebhook();
      const strangerApplicationId = stranger.applicationId;
      const applicationOfSameAccount = await t.fixtures.application(tenant.accountId);
      const token = await newToken({}, tenant.applicationId);

      const doc = (await t.http.get('/docs-json')).body as { paths: Record<string, Record<string, { security?: unknown[] }>> };
      const operations: Operation[] = [];
      const unauthenticated: Operation[] = [];
      for (const [path, methods] of Object.entries(doc.paths)) {
        for (const [method, operation] of Object.entries(methods)) {
          (operation.security?.length ? operations : unauthenticated).push({ method: method as Method, path });
        }
      }
      const call = (operation: Operation, applicationId: number) => {
        const url = operation.path.replace('{application_id}', String(applicationId)).replace(/\{[a-z_]+\}/g, 'x_missing');
        return t.http[operation.method](url).set('Authorization', token).set('Content-Type', 'application/json');
      };
      const answers: string[] = [];
      const expected: string[] = [];
      const answer = (operation: Operation, where: string, res: { status: number; body: { error?: { code: string } } }) =>
        answers.push(`${operation.method.toUpperCase()} ${operation.path} ${where}: ${res.body?.error?.code ?? res.status}`);
      const expectAnswer = (operation: Operation, where: string, outcome: string) =>
        expected.push(`${operation.method.toUpperCase()} ${operation.path} ${where}: ${outcome}`);

      let tenantRoutes = 0;
      let adminRoutes = 0;
      for (const operation of operations) {
        if (operation.path.startsWith('/application/{application_id}')) {
          tenantRoutes++;
          for (const [where, applicationId] of [
            ['another account', strangerApplicationId],
            ['same account, other application', applicationOfSameAccount],
            ['no such application', NO_SUCH_APPLICATION],
          ] as const) {
            answer(operation, where, await call(operation, applicationId));
            expectAnswer(operation, where, '403-03');
          }
          if (!PORTAL_TENANT_OPERATIONS.has(`${operation.method} ${operation.path}`)) {
            answer(operation, 'its own', await call(operation, tenant.applicationId));
            expectAnswer(operation, 'its own', '403-04');
          }
        } else if (operation.path.startsWith('/admin/')) {
          adminRoutes++;
          answer(operation, 'admin', await call(operation, 0));
          expectAnswer(operation, 'admin', '403-04');
        } else if (operation.path === '/applications') {
          // The account's application list would name its other applications.
          answer(operation, 'listing', await call(operation, 0));
          expectAnswer(operation, 'listing', '403-04');
        } else {
          // Beyond its application only the catalogues (GET /event_types, GET /error_codes…).
          answer(operation, 'catalogue', await call(operation, 0));
          // One entry of a catalogue, under the walk's placeholder name: read, and not found.
          const notFound = operation.path.startsWith('/error_codes/')
            ? '404-04'
            : operation.path.startsWith('/event_types/')
              ? '404-08'
              : null;
          expectAnswer(operation, 'catalogue', notFound ?? '200');
        }
      }
      expect(answers).toEqual(expected);
      // The walk covers the API, not a handful of routes: both portal_links routes, the tenant and admin routes.
      expect(tenantRoutes).toBeGreaterThanOrEqual(25);
      expect(adminRoutes).toBeGreaterThanOrEqual(12);
      // Left out of the walk only because they need no key at all.
      for (const operation of unauthenticated) {
        const res = await t.http[operation.method](operation.path);
        expect({ operation, code: res.body?.error?.code ?? null }).not.toEqual({ operation, code: '403-01' });
      }

      // And on its own application exactly the listed routes let it in (their answers are the route's own).
      expect(operations.filter((operation) => PORTAL_TENANT_OPERATIONS.has(`${operation.method} ${operation.path}`)).length).toBe(
        PORTAL_TENANT_OPERATIONS.size,
      );
      for (const operation of operations.filter((candidate) => PORTAL_TENANT_OPERATIONS.has(`${candidate.method} ${candidate.path}`))) {
        const res = await call(operation, tenant.applicationId);
        expect({ operation, code: res.body?.error?.code ?? 'ok' }).toEqual({ operation, code: expect.not.stringMatching(/^403/) });
      }
    });

    it('is refused (403-02) from the millisecond it expires, although it was cached', async () => {
      const token = await newToken({ expires_in_seconds: 90 });
      clock.advance(50_000);
      // Cached now for up to a minute, past the token's expiry 40 s later.
      expect((await readSecret(token)).status).toBe(200);
      clock.advance(39_999);
      expect((await readSecret(token)).status).toBe(200);
      clock.advance(1);
      const refused = await readSecret(token);
      expectError(refused, 403, '403-02');
      expect(refused.body.error.message).toMatch(/portal token .*expired/);
      expectError(await t.http.get('/event_types').set('Authorization', token), 403, '403-02');
      expectError(await createLink({}, token), 403, '403-02');
    });

    it('is refused everywhere once expired, never having been used', async () => {
      const token = await newToken({ expires_in_seconds: 60 });
      clock.advance(60_000);
      expectError(await readSecret(token), 403, '403-02');
      expectError(await t.http.get(`/application/${owner.applicationId}/deliveries`).set('Authorization', token), 403, '403-02');
      expectError(await t.http.post('/admin/accounts').set('Authorization', token).send({ name: 'x' }), 403, '403-02');
    });

    it('spends a rate limit of its own, not its application’s or its account key’s', async () => {
      const limited = await createTestApp({
        databaseUrl: t.db.url,
        env: { HERALD_RATE_LIMIT_PER_SECOND: '1', HERALD_RATE_LIMIT_BURST: '2' },
        override: (builder) => builder.overrideProvider(CLOCK).useValue(clock),
      });
      try {
        const [first, second] = [await newToken(), await newToken()];
        const read = (authorization: string) =>
          limited.http.get(`/application/${owner.applicationId}/webhook/secret`).set('Authorization', authorization);
        expect((await read(first)).status).toBe(200);
        expect((await read(first)).status).toBe(200);
        expectError(await read(first), 429, '429-00');
        expect((await read(second)).status).toBe(200);
        expect((await read(owner.key)).status).toBe(200);
      } finally {
        await limited.app.close();
      }
    });
  });

  describe('revoking the links', () => {
    it('stops every working link of the application at once, cached ones included, and nothing else', async () => {
      const used = await newToken();
      const unused = await newToken();
      const expired = await newToken({ expires_in_seconds: 60 });
      clock.advance(60_000);
      const otherApplications = await newToken({}, siblingApplicationId);
      expect((await readSecret(used)).status).toBe(200);
      // Links made earlier in this file still work too: revoking counts them all.
      const [{ working }] = await sql<{ working: number }>(
        t.db.url,
        'SELECT count(*)::int AS working FROM portal_links WHERE application_id = $1 AND revoked_at IS NULL AND expires_at > $2',
        [owner.applicationId, clock.now()],
      );
      expect(working).toBeGreaterThanOrEqual(2);

      const revoked = await revokeLinks();
      expect(revoked.status).toBe(200);
      expect(revoked.body).toEqual({ success: true, data: { revoked: working } });
      for (const token of [used, unused, expired]) expectError(await readSecret(token), 403, '403-02');
      expectError(await t.http.get('/event_types').set('Authorization', used), 403, '403-02');

      expect((await readSecret(otherApplications, siblingApplicationId)).status).not.toBe(403);
      expect((await readSecret(owner.key)).status).toBe(200);
      const [row] = await sql<{ revoked_at: Date | null }>(t.db.url, 'SELECT revoked_at FROM portal_links WHERE token_hash = $1', [
        hashApiKey(used),
      ]);
      expect(row.revoked_at).toEqual(clock.now());
      const [expiredRow] = await sql<{ revoked_at: Date | null }>(t.db.url, 'SELECT revoked_at FROM portal_links WHERE token_hash = $1', [
        hashApiKey(expired),
      ]);
      expect(expiredRow.revoked_at).toBeNull();

      // Links made afterwards work; revoking again is safe and counts only them.
      const later = await newToken();
      expect((await readSecret(later)).status).toBe(200);
      expect((await revokeLinks(ADMIN_KEY)).body).toEqual({ success: true, data: { revoked: 1 } });
      expectError(await readSecret(later), 403, '403-02');
      expect((await revokeLinks()).body).toEqual({ success: true, data: { revoked: 0 } });
    });

    it('is refused to a portal token (403-04), which keeps working', async () => {
      const token = await newToken();
      expectError(await revokeLinks(token), 403, '403-04');
      expectError(await createLink({}, token), 403, '403-04');
      expect((await readSecret(token)).status).toBe(200);
      await revokeLinks().expect(200);
    });

    it('reaches every api process, though each had the token cached', async () => {
      // The other process runs on the real clock; this file's clock only ever moved forward, so its links still work there.
      const other = await createTestApp({ databaseUrl: t.db.url });
      try {
        const token = await newToken();
        const read = (app: TestApp) => app.http.get(`/application/${owner.applicationId}/webhook/secret`).set('Authorization', token);
        expect((await read(other)).status).toBe(200);
        expect((await read(t)).status).toBe(200);
        await revokeLinks().expect(200);
        expectError(await read(t), 403, '403-02');
        // The other process hears of it through the revoking statement's NOTIFY.
        let answer = await read(other);
        for (let tries = 0; answer.status !== 403 && tries < 40; tries++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          answer = await read(other);
        }
        expectError(answer, 403, '403-02');
      } finally {
        await other.app.close();
      }
    });
  });
});
