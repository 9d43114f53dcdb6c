import { createTestApp, TestApp } from './support/test-app';
import { detailFields, expectError } from './support/expect-error';
import { Tenant, VALID_WEBHOOK } from './support/fixtures';
import { sql } from '@herald/database/testing';

describe('webhook configuration (PUT/GET/DELETE /application/{id}/webhook)', () => {
  let t: TestApp;
  let tenant: Tenant;
  const put = (body: unknown) =>
    t.http
      .put(`/application/${tenant.applicationId}/webhook`)
      .set('Authorization', tenant.key)
      .send(body as object);
  const withRetry = (retry_config: object) => ({ ...VALID_WEBHOOK, retry_config: { ...VALID_WEBHOOK.retry_config, ...retry_config } });

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenant();
  });
  afterAll(() => t.close());

  describe('the seed shape', () => {
    it('answers 200 with success and data equal to the configuration supplied', async () => {
      const res = await put(VALID_WEBHOOK);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: VALID_WEBHOOK });
    });

    it('replaces the whole configuration on a second PUT and GET returns the stored one', async () => {
      const replacement = {
        url: 'https://hooks.example.org/v2',
        retry_enabled: 1,
        retry_config: { retry_value: 10, max_retries: 3, backoff_type: 'linear', backoff_value: 5 },
        headers: { 'X-Second': 'b', 'X-First': 'a' },
      };
      expect((await put(replacement)).body.data).toEqual(replacement);
      const res = await t.http.get(`/application/${tenant.applicationId}/webhook`).set('Authorization', tenant.key);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: replacement });
      // The header map keeps the order the customer wrote.
      expect(Object.keys(res.body.data.headers)).toEqual(['X-Second', 'X-First']);
    });

    it('stores the default policy and empty headers when retries are off and they are omitted', async () => {
      const res = await put({ url: 'https://example.com/h', retry_enabled: 0 });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        url: 'https://example.com/h',
        retry_enabled: 0,
        retry_config: { retry_value: 30, max_retries: 5, backoff_type: 'multiplier', backoff_value: 2 },
        headers: {},
      });
    });

    it('keeps a policy given with retries off', async () => {
      const res = await put({ ...withRetry({ backoff_type: 'fixed', backoff_value: 0 }), retry_enabled: 0 });
      expect(res.body.data.retry_config).toEqual({ retry_value: 30, max_retries: 5, backoff_type: 'fixed', backoff_value: 0 });
    });
  });

  describe('validation (PRODUCT.md §3), each bound at its edge and just past it', () => {
    const accepted = async (body: object) => {
      const res = await put(body);
      if (res.status !== 200) throw new Error(`expected 200 for ${JSON.stringify(body)}, got ${JSON.stringify(res.body)}`);
    };
    const refused = async (body: unknown, code: string, field: string) => {
      const res = await put(body);
      expectError(res, Number(code.slice(0, 3)), code);
      expect(detailFields(res)).toContain(field);
    };

    it.each([
      ['retry_value', 1, 0],
      ['retry_value', 86_400, 86_401],
      ['max_retries', 0, -1],
      ['max_retries', 25, 26],
    ])('%s: %d is accepted, %d is refused', async (field, edge, past) => {
      await accepted(withRetry({ [field]: edge }));
      await refused(withRetry({ [field]: past }), '400-02', `retry_config.${field}`);
    });

    it.each([
      ['multiplier', 1, 0],
      ['multiplier', 10, 11],
      ['linear', 0, -1],
      ['linear', 86_400, 86_401],
      ['fixed', 0, -1],
      ['fixed', 86_400, 86_401],
    ])('backoff_value for %s: %d is accepted, %d is refused', async (type, edge, past) => {
      await accepted(withRetry({ backoff_type: type, backoff_value: edge }));
      await refused(withRetry({ backoff_type: type, backoff_value: past }), '400-02', 'retry_config.backoff_value');
    });

    it('refuses an unknown backoff_type and names the allowed ones', async () => {
      const res = await put(withRetry({ backoff_type: 'exponential' }));
      expectError(res, 400, '400-02');
      expect(res.body.error.details).toEqual([
        { field: 'retry_config.backoff_type', message: 'retry_config.backoff_type must be one of multiplier, linear, fixed' },
      ]);
    });

    it.each<[unknown, string]>([
      [true, 'a boolean'],
      ['1', 'a string'],
      [2, 'another integer'],
      [1.5, 'a fraction'],
    ])('refuses retry_enabled %p (%s)', async (value) => {
      await refused({ ...VALID_WEBHOOK, retry_enabled: value }, '400-02', 'retry_enabled');
    });

    it('says a retry field must be an integer when given a string or a fraction, not that it is out of range', async () => {
      const res = await put(withRetry({ retry_value: '30' }));
      expect(res.body.error.details).toEqual([
        { field: 'retry_config.retry_value', message: 'retry_config.retry_value must be an integer (got a string)' },
      ]);
      const fraction = await put(withRetry({ max_retries: 2.5 }));
      expect(fraction.body.error.details).toEqual([
        { field: 'retry_config.max_retries', message: 'retry_config.max_retries must be an integer (got the fraction 2.5)' },
      ]);
      const flag = await put({ ...VALID_WEBHOOK, retry_enabled: true });
      expect(flag.body.error.details).toEqual([{ field: 'retry_enabled', message: 'retry_enabled must be the integer 0 or 1' }]);
    });

    it('lets backoff_value be omitted for fixed backoff only (0 is stored)', async () => {
      const res = await put({ ...VALID_WEBHOOK, retry_config: { retry_value: 10, max_retries: 2, backoff_type: 'fixed' } });
      expect(res.status).toBe(200);
      expect(res.body.data.retry_config).toEqual({ retry_value: 10, max_retries: 2, backoff_type: 'fixed', backoff_value: 0 });
      await refused(
        { ...VALID_WEBHOOK, retry_config: { retry_value: 10, max_retries: 2, backoff_type: 'linear' } },
        '400-02',
        'retry_config.backoff_value',
      );
    });

    it('refuses non-integer retry fields, including numeric strings', async () => {
      await refused(withRetry({ retry_value: '30' }), '400-02', 'retry_config.retry_value');
      await refused(withRetry({ max_retries: 2.5 }), '400-02', 'retry_config.max_retries');
    });

    it('requires retry_config when retry_enabled is 1, and all four of its fields', async () => {
      await refused({ url: 'https://example.com/h', retry_enabled: 1 }, '400-02', 'retry_config');
      const res = await put({ ...VALID_WEBHOOK, retry_config: {} });
      expectError(res, 400, '400-02');
      expect(detailFields(res).sort()).toEqual(
        ['retry_config.backoff_type', 'retry_config.backoff_value', 'retry_config.max_retries', 'retry_config.retry_value'].sort(),
      );
      await refused({ ...VALID_WEBHOOK, retry_config: 'soon' }, '400-02', 'retry_config');
      await refused({ ...VALID_WEBHOOK, retry_config: null }, '400-02', 'retry_config');
    });

    it('requires url and retry_enabled', async () => {
      const res = await put({ headers: {} });
      expectError(res, 400, '400-02');
      expect(detailFields(res).sort()).toEqual(['retry_enabled', 'url']);
    });

    it('refuses unknown fields, at the top and inside retry_config', async () => {
      await refused({ ...VALID_WEBHOOK, secret: 'x' }, '400-02', 'secret');
      await refused(withRetry({ jitter: 5 }), '400-02', 'retry_config.jitter');
    });

    it('reports every failing field at once', async () => {
      const res = await put({ url: 'ftp://x', retry_enabled: true, retry_config: { ...VALID_WEBHOOK.retry_config, max_retries: 99 } });
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toEqual(['url', 'retry_enabled', 'retry_config.max_retries']);
      expect(res.body.error.message).toMatch(/and 2 more/);
    });
  });

  describe('url (400-05)', () => {
    const refusedUrl = async (url: unknown, message: RegExp) => {
      const res = await put({ ...VALID_WEBHOOK, url });
      expectError(res, 400, '400-05');
      expect(res.body.error.details).toEqual([{ field: 'url', message: expect.stringMatching(message) }]);
    };

    it('accepts http and https URLs up to 2048 characters', async () => {
      const base = 'https://example.com/';
      await expect(put({ ...VALID_WEBHOOK, url: base + 'a'.repeat(2048 - base.length) })).resolves.toHaveProperty('status', 200);
      await expect(put({ ...VALID_WEBHOOK, url: 'http://example.com:8080/x?y=1' })).resolves.toHaveProperty('status', 200);
      await refusedUrl(base + 'a'.repeat(2049 - base.length), /at most 2048/);
    });

    it.each([
      ['ftp://example.com/h', /http or https/],
      ['javascript:alert(1)', /http or https/],
      ['/relative/path', /absolute URL/],
      ['not a url', /absolute URL/],
      ['https://user:pass@example.com/h', /credentials/],
      ['https://token@example.com/h', /credentials/],
      [' https://example.com/h', /white space/],
      ['', /must not be empty/],
    ])('refuses %p', async (url, message) => {
      await refusedUrl(url, message);
    });

    it('refuses a non-string url as a validation error', async () => {
      const res = await put({ ...VALID_WEBHOOK, url: 42 });
      expectError(res, 400, '400-05');
    });

    it.each([
      ['http://10.0.0.1/h', 'private'],
      ['http://192.168.1.10/h', 'private'],
      ['http://172.16.0.5/h', 'private'],
      ['http://169.254.169.254/latest/meta-data', 'link-local'],
      ['http://100.64.0.1/h', 'carrier-grade NAT'],
      ['http://0.0.0.0/h', 'unspecified'],
      ['http://224.0.0.1/h', 'multicast'],
      ['http://[fd00::1]/h', 'unique-local'],
      ['http://[::ffff:10.0.0.1]/h', 'private'],
      ['http://0x0a000001/h', 'private'],
    ])('refuses the IP literal in %s (%s)', async (url, range) => {
      await refusedUrl(url, new RegExp(range));
    });

    it.each([
      ['http://[::127.0.0.1]/h', 'IPv4-compatible'],
      ['http://[::a9fe:a9fe]/h', 'IPv4-compatible'],
      ['http://[::8.8.8.8]/h', 'IPv4-compatible'],
      ['http://[64:ff9b::127.0.0.1]/h', 'NAT64'],
      ['http://[64:ff9b:1::a00:1]/h', 'NAT64'],
      ['http://[2002:7f00:1::1]/h', '6to4'],
      ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/h', 'Teredo'],
      ['http://[::ffff:0:127.0.0.1]/h', 'SIIT'],
    ])('refuses %s: an IPv6 form that embeds an IPv4 address (%s), even with 127.0.0.0/8 allow-listed', async (url, form) => {
      await refusedUrl(url, new RegExp(form));
    });

    it('says why an address is refused in a sentence', async () => {
      const res = await put({ ...VALID_WEBHOOK, url: 'http://10.1.2.3/h' });
      expect(res.body.error.message).toBe(
        "The webhook URL's host 10.1.2.3 is a private address; Herald only delivers to public addresses.",
      );
    });

    it.each([
      ['a line feed', 'https://example.com/h\nX-Injected: 1'],
      ['a carriage return', 'https://example.com/\rh'],
      ['a tab', 'https://exa\tmple.com/h'],
      ['a NUL', 'https://example.com/h\u0000'],
      ['a space', 'https://example.com/a b'],
    ])('refuses a url containing %s (400-05), though the URL parser would drop it', async (_, url) => {
      await refusedUrl(url, /spaces or control characters/);
    });

    it('accepts public IP literals and host names (names are checked at each connection)', async () => {
      await expect(put({ ...VALID_WEBHOOK, url: 'http://93.184.215.14/h' })).resolves.toHaveProperty('status', 200);
      await expect(put({ ...VALID_WEBHOOK, url: 'http://[2606:4700::1111]/h' })).resolves.toHaveProperty('status', 200);
      await expect(put({ ...VALID_WEBHOOK, url: 'https://internal.example/h' })).resolves.toHaveProperty('status', 200);
    });

    it('accepts loopback only because this app allow-lists 127.0.0.0/8', async () => {
      await expect(put({ ...VALID_WEBHOOK, url: 'http://127.0.0.1:9/h' })).resolves.toHaveProperty('status', 200);
      await refusedUrl('http://[::1]/h', /loopback/);
    });
  });

  describe('headers (400-06)', () => {
    const refusedHeaders = async (headers: unknown, field: string, message: RegExp, code = '400-06') => {
      const res = await put({ ...VALID_WEBHOOK, headers });
      expectError(res, 400, code);
      expect(res.body.error.details).toContainEqual({ field, message: expect.stringMatching(message) });
    };

    it('keeps header names that are Object.prototype names exactly, in order, through PUT and GET', async () => {
      const headers = '{"toString":"x","hasOwnProperty":"y","valueOf":"z","constructor":"c","__proto__":"p"}';
      const body = `{"url":"https://example.com/h","retry_enabled":0,"headers":${headers}}`;
      const res = await t.http
        .put(`/application/${tenant.applicationId}/webhook`)
        .set('Authorization', tenant.key)
        .set('Content-Type', 'application/json')
        .send(body);
      expect(res.status).toBe(200);
      const stored = (text: string) => Object.entries(JSON.parse(text).data.headers);
      const expected = [
        ['toString', 'x'],
        ['hasOwnProperty', 'y'],
        ['valueOf', 'z'],
        ['constructor', 'c'],
        ['__proto__', 'p'],
      ];
      expect(stored(res.text)).toEqual(expected);
      const read = await t.http.get(`/application/${tenant.applicationId}/webhook`).set('Authorization', tenant.key);
      expect(stored(read.text)).toEqual(expected);
    });

    it('accepts tabs and Latin-1 characters in a header value', async () => {
      const res = await put({ ...VALID_WEBHOOK, headers: { 'X-Note': 'a\tcaf\u00e9' } });
      expect(res.status).toBe(200);
      expect(res.body.data.headers).toEqual({ 'X-Note': 'a\tcaf\u00e9' });
    });

    it('refuses a NUL or a line break in a header value with 400-06, naming the header', async () => {
      await refusedHeaders({ 'X-Token': 'a\u0000b' }, 'headers.X-Token', /CR, LF, NUL or other control characters/);
      await refusedHeaders({ 'X-Token': 'a\r\nX-Evil: 1' }, 'headers.X-Token', /CR, LF, NUL or other control characters/);
    });

    it('accepts 20 headers with names of 256 and values of 4096 characters', async () => {
      const headers: Record<string, string> = { ['X'.repeat(256)]: 'v'.repeat(4096) };
      for (let i = 1; i < 20; i++) headers[`X-H${i}`] = `${i}`;
      const res = await put({ ...VALID_WEBHOOK, headers });
      expect(res.status).toBe(200);
      expect(res.body.data.headers).toEqual(headers);
    });

    it('refuses a 21st header, a 257-character name and a 4097-character value', async () => {
      const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']));
      await refusedHeaders(many, 'headers', /at most 20/);
      await refusedHeaders({ ['X'.repeat(257)]: 'v' }, `headers.${'X'.repeat(257)}`, /1 to 256/);
      await refusedHeaders({ 'X-Long': 'v'.repeat(4097) }, 'headers.X-Long', /at most 4096/);
    });

    it.each([
      'Host',
      'content-length',
      'Content-Type',
      'Transfer-Encoding',
      'CONNECTION',
      'Keep-Alive',
      'Upgrade',
      'TE',
      'Trailer',
      'Expect',
      'Proxy-Authorization',
      'proxy-anything',
      'webhook-signature',
      'Webhook-Id',
    ])('refuses the reserved name %s', async (name) => {
      await refusedHeaders({ [name]: 'v' }, `headers.${name}`, /reserved/);
    });

    it.each([
      ['X Space', /token characters/],
      ['X:Colon', /token characters/],
      ['X-Ünicode', /token characters/],
    ])('refuses the malformed name %p', async (name, message) => {
      await refusedHeaders({ [name]: 'v' }, `headers.${name}`, message);
    });

    it.each([
      ['CR', 'a\rb'],
      ['LF', 'a\nInjected: yes'],
      ['NUL', 'a\u0000b'],
      ['another control character', 'a\u0001b'],
      ['DEL', 'a\u007fb'],
      ['a character beyond Latin-1, which HTTP cannot carry (undici would refuse every delivery)', 'price in €'],
    ])('refuses a value containing %s', async (_, value) => {
      await refusedHeaders({ 'X-Value': value }, 'headers.X-Value', /CR, LF, NUL or other control characters/);
    });

    it('refuses non-string values and names that differ only by case', async () => {
      await refusedHeaders({ 'X-Number': 5 }, 'headers.X-Number', /strings/);
      await refusedHeaders({ 'X-Dup': 'a', 'x-dup': 'b' }, 'headers.x-dup', /more than once/);
    });

    it('refuses headers that are not an object', async () => {
      await refusedHeaders(['X-A'], 'headers', /object/);
      await refusedHeaders(null, 'headers', /object/);
    });

    it('answers 400-02 when header problems come with other validation failures', async () => {
      const res = await put({ ...VALID_WEBHOOK, retry_enabled: 7, headers: { Host: 'x' } });
      expectError(res, 400, '400-02');
      expect(detailFields(res)).toEqual(['retry_enabled', 'headers.Host']);
    });
  });

  describe('reading, deleting and previewing', () => {
    let other: Tenant;
    beforeAll(async () => {
      other = await t.fixtures.tenant();
    });

    it('answers 404-02 for GET, DELETE, the preview and the secret when no webhook is configured', async () => {
      for (const [method, path] of [
        ['get', ''],
        ['delete', ''],
        ['get', '/retry_schedule'],
        ['get', '/secret'],
        ['post', '/secret/rotate'],
      ] as const) {
        const res = await t.http[method](`/application/${other.applicationId}/webhook${path}`).set('Authorization', other.key);
        expectError(res, 404, '404-02');
      }
    });

    it('DELETE removes the configuration and its subscriptions, answering with what was removed', async () => {
      const app = `/application/${other.applicationId}/webhook`;
      await t.http.put(app).set('Authorization', other.key).send(VALID_WEBHOOK).expect(200);
      await t.http.put(`${app}/subscription/acw_start`).set('Authorization', other.key).send({}).expect(200);
      const res = await t.http.delete(app).set('Authorization', other.key).set('Content-Type', 'application/json');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: VALID_WEBHOOK });
      expectError(await t.http.get(app).set('Authorization', other.key), 404, '404-02');
      // A new configuration starts without the old subscriptions.
      await t.http.put(app).set('Authorization', other.key).send(VALID_WEBHOOK).expect(200);
      const subs = await t.http.get(`${app}/subscription`).set('Authorization', other.key);
      expect(subs.body).toEqual({ success: true, subscriptions: {} });
    });

    it.each([
      ['multiplier', { retry_value: 30, max_retries: 5, backoff_value: 2 }, [30, 60, 120, 240, 480]],
      ['linear', { retry_value: 10, max_retries: 4, backoff_value: 15 }, [10, 25, 40, 55]],
      ['fixed', { retry_value: 60, max_retries: 3, backoff_value: 999 }, [60, 60, 60]],
      [
        'multiplier',
        { retry_value: 3600, max_retries: 8, backoff_value: 10 },
        [3600, 36_000, 86_400, 86_400, 86_400, 86_400, 86_400, 86_400],
      ],
    ])('previews the %s schedule %j', async (backoff_type, policy, delays) => {
      await put({ ...VALID_WEBHOOK, retry_config: { ...policy, backoff_type } }).expect(200);
      const res = await t.http.get(`/application/${tenant.applicationId}/webhook/retry_schedule`).set('Authorization', tenant.key);
      expect(res.body).toEqual({
        success: true,
        data: { delays_seconds: delays, total_seconds: delays.reduce((a, b) => a + b, 0) },
      });
    });

    it('previews an empty schedule when retries are off', async () => {
      await put({ ...VALID_WEBHOOK, retry_enabled: 0 }).expect(200);
      const res = await t.http.get(`/application/${tenant.applicationId}/webhook/retry_schedule`).set('Authorization', tenant.key);
      expect(res.body).toEqual({ success: true, data: { delays_seconds: [], total_seconds: 0 } });
    });
  });

  describe('signing secret', () => {
    it('is made with the first configuration, kept across updates and replaced by rotation', async () => {
      const fresh = await t.fixtures.tenant();
      const base = `/application/${fresh.applicationId}/webhook`;
      await t.http.put(base).set('Authorization', fresh.key).send(VALID_WEBHOOK).expect(200);
      const first = (await t.http.get(`${base}/secret`).set('Authorization', fresh.key).expect(200)).body.data.secret;
      expect(first).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(first.slice(6), 'base64')).toHaveLength(32);

      await t.http
        .put(base)
        .set('Authorization', fresh.key)
        .send({ ...VALID_WEBHOOK, url: 'https://example.com/other' })
        .expect(200);
      expect((await t.http.get(`${base}/secret`).set('Authorization', fresh.key)).body.data.secret).toBe(first);

      const rotated = await t.http.post(`${base}/secret/rotate`).set('Authorization', fresh.key).set('Content-Type', 'application/json');
      expect(rotated.status).toBe(200);
      expect(rotated.body).toEqual({ success: true, data: { secret: expect.stringMatching(/^whsec_/) } });
      expect(rotated.body.data.secret).not.toBe(first);
      expect((await t.http.get(`${base}/secret`).set('Authorization', fresh.key)).body.data.secret).toBe(rotated.body.data.secret);
    });

    it('keeps the previous secret valid for 24 hours after a rotation', async () => {
      const fresh = await t.fixtures.tenantWithWebhook();
      const base = `/application/${fresh.applicationId}/webhook`;
      const before = Date.now();
      await t.http.post(`${base}/secret/rotate`).set('Authorization', fresh.key).expect(200);
      const rows = await sql<{ expires_at: Date | null }>(
        t.db.url,
        'SELECT expires_at FROM webhook_secrets WHERE application_id = $1 ORDER BY created_at',
        [fresh.applicationId],
      );
      expect(rows).toHaveLength(2);
      const graceMs = new Date(rows[0].expires_at as Date).getTime() - before;
      expect(graceMs).toBeGreaterThanOrEqual(24 * 3600 * 1000 - 5_000);
      expect(graceMs).toBeLessThanOrEqual(24 * 3600 * 1000 + 5_000);
      expect(rows[1].expires_at).toBeNull();
    });

    it('leaves exactly one current secret when ten rotations race', async () => {
      const fresh = await t.fixtures.tenantWithWebhook();
      const base = `/application/${fresh.applicationId}/webhook`;
      const results = await Promise.all(
        Array.from({ length: 10 }, () => t.http.post(`${base}/secret/rotate`).set('Authorization', fresh.key)),
      );
      expect(results.every((r) => r.status === 200)).toBe(true);
      const current = (await t.http.get(`${base}/secret`).set('Authorization', fresh.key)).body.data.secret;
      expect(results.map((r) => r.body.data.secret)).toContain(current);
      const rows = await sql(t.db.url, 'SELECT id FROM webhook_secrets WHERE application_id = $1 AND expires_at IS NULL', [
        fresh.applicationId,
      ]);
      expect(rows).toHaveLength(1);
    });
  });
});

describe('localhost names as webhook hosts (RFC 6761, PRODUCT.md §17)', () => {
  const put = (t: TestApp, tenant: Tenant, url: string) =>
    t.http
      .put(`/application/${tenant.applicationId}/webhook`)
      .set('Authorization', tenant.key)
      .send({ ...VALID_WEBHOOK, url });

  it('refuses localhost and every name under it with 400-05 naming url, as it refuses a loopback IP', async () => {
    const t = await createTestApp({ env: { HERALD_ALLOWED_TARGET_CIDRS: '' } });
    try {
      const tenant = await t.fixtures.tenant();
      for (const url of ['http://localhost/h', 'http://LocalHost.:8080/h', 'https://api.localhost/h', 'http://127.0.0.1/h']) {
        const res = await put(t, tenant, url);
        expectError(res, 400, '400-05');
        expect(res.body.error.details).toEqual([{ field: 'url', message: expect.stringMatching(/loopback/) }]);
      }
      expect((await put(t, tenant, 'https://localhost.example.com/h')).status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('accepts it where the operator allowed loopback (HERALD_ALLOWED_TARGET_CIDRS=127.0.0.0/8)', async () => {
    const t = await createTestApp();
    try {
      const tenant = await t.fixtures.tenant();
      expect((await put(t, tenant, 'http://localhost:9/h')).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});
