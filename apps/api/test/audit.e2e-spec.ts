import { AUDIT_ACTIONS, AuditAction, bootstrapKeyLabel, REDACTED } from '@herald/core';
import { Row, sql } from '@herald/database/testing';
import type { Response, Test } from 'supertest';
import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';
import { expectError } from './support/expect-error';
import { Tenant, VALID_WEBHOOK } from './support/fixtures';

/**
 * The audit log (PRODUCT.md §16). The walk at the top takes every operation of the OpenAPI
 * document that changes something (and the two secret reads) and fails when one writes no record
 * — exactly one, naming its caller and request, in the change's own transaction, leaving every
 * earlier record as it was. A new route either gets a SCENARIO here (and so a record) or is listed
 * in NOT_AUDITED with the reason it changes no configuration or access.
 */

type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

interface Context {
  t: TestApp;
  /** A fresh tenant with the VALID_WEBHOOK configuration, its own for this scenario. */
  tenant: Tenant;
  /** What a setup made for its run (an id). */
  made: Record<string, string>;
  call(method: Method, path: string, key?: string): Test;
}

interface Scenario {
  action: AuditAction;
  /**
   * What the record is about: the scenario's application (and its account), its account, the
   * account or application the operation made, or nothing (the operator's own settings).
   */
  target: 'application' | 'account' | 'made' | 'none';
  /** Whose key makes the change: the tenant's account key, or the admin key. */
  as: 'account' | 'admin';
  /** Brings the tenant to where the operation can succeed; writes records of its own, before the walk looks. */
  setup?(context: Context): Promise<void>;
  run(context: Context): Test;
}

const tenantPath = (context: Context, rest = '') => `/application/${context.tenant.applicationId}${rest}`;
let nextEventType = 0;

/** Every operation that changes configuration or access, by its OpenAPI path. */
const SCENARIOS: Record<string, Scenario> = {
  'PUT /application/{application_id}/webhook': {
    action: 'webhook.updated',
    target: 'application',
    as: 'account',
    run: (c) => c.call('put', tenantPath(c, '/webhook')).send({ ...VALID_WEBHOOK, url: 'https://example.com/moved' }),
  },
  'DELETE /application/{application_id}/webhook': {
    action: 'webhook.deleted',
    target: 'application',
    as: 'account',
    run: (c) => c.call('delete', tenantPath(c, '/webhook')),
  },
  'GET /application/{application_id}/webhook/secret': {
    action: 'webhook.secret_read',
    target: 'application',
    as: 'account',
    run: (c) => c.call('get', tenantPath(c, '/webhook/secret')),
  },
  'POST /application/{application_id}/webhook/secret/rotate': {
    action: 'webhook.secret_rotated',
    target: 'application',
    as: 'account',
    run: (c) => c.call('post', tenantPath(c, '/webhook/secret/rotate')),
  },
  'PUT /application/{application_id}/webhook/throttle': {
    action: 'webhook.throttle_updated',
    target: 'application',
    as: 'account',
    run: (c) => c.call('put', tenantPath(c, '/webhook/throttle')).send({ per_second: 20 }),
  },
  'POST /application/{application_id}/webhook/disable': {
    action: 'webhook.disabled',
    target: 'application',
    as: 'account',
    run: (c) => c.call('post', tenantPath(c, '/webhook/disable')),
  },
  'POST /application/{application_id}/webhook/enable': {
    action: 'webhook.enabled',
    target: 'application',
    as: 'account',
    setup: async (c) => void (await c.call('post', tenantPath(c, '/webhook/disable')).expect(200)),
    run: (c) => c.call('post', tenantPath(c, '/webhook/enable')),
  },
  'PUT /application/{application_id}/webhook/subscription/{subscription}': {
    action: 'subscription.created',
    target: 'application',
    as: 'account',
    run: (c) => c.call('put', tenantPath(c, '/webhook/subscription/acw_start')).send({ ensure_delivery: true }),
  },
  'DELETE /application/{application_id}/webhook/subscription/{subscription}': {
    action: 'subscription.deleted',
    target: 'application',
    as: 'account',
    setup: async (c) => void (await c.call('put', tenantPath(c, '/webhook/subscription/acw_start')).send({}).expect(200)),
    run: (c) => c.call('delete', tenantPath(c, '/webhook/subscription/acw_start')),
  },
  'PUT /application/{application_id}/webhook/subscription/{subscription}/filter': {
    action: 'subscription.filter_updated',
    target: 'application',
    as: 'account',
    setup: async (c) => void (await c.call('put', tenantPath(c, '/webhook/subscription/acw_start')).send({}).expect(200)),
    run: (c) => c.call('put', tenantPath(c, '/webhook/subscription/acw_start/filter')).send({ filter: { 'queue.id': 'q-1' } }),
  },
  'DELETE /application/{application_id}/webhook/subscription/{subscription}/filter': {
    action: 'subscription.filter_deleted',
    target: 'application',
    as: 'account',
    setup: async (c) => {
      await c.call('put', tenantPath(c, '/webhook/subscription/acw_start')).send({}).expect(200);
      await c
        .call('put', tenantPath(c, '/webhook/subscription/acw_start/filter'))
        .send({ filter: { 'queue.id': 'q-1' } })
        .expect(200);
    },
    run: (c) => c.call('delete', tenantPath(c, '/webhook/subscription/acw_start/filter')),
  },
  'POST /application/{application_id}/portal_links': {
    action: 'portal_link.created',
    target: 'application',
    as: 'account',
    run: (c) => c.call('post', tenantPath(c, '/portal_links')).send({}),
  },
  'DELETE /application/{application_id}/portal_links': {
    action: 'portal_links.revoked',
    target: 'application',
    as: 'account',
    setup: async (c) => void (await c.call('post', tenantPath(c, '/portal_links')).send({}).expect(201)),
    run: (c) => c.call('delete', tenantPath(c, '/portal_links')),
  },
  'POST /admin/accounts': {
    action: 'account.created',
    target: 'made',
    as: 'admin',
    run: (c) => c.call('post', '/admin/accounts', ADMIN_KEY).send({ name: 'Audited' }),
  },
  'POST /admin/applications': {
    action: 'application.created',
    target: 'made',
    as: 'admin',
    // An id of its own: the next free one would be one the fixtures hand out next.
    run: (c) =>
      c
        .call('post', '/admin/applications', ADMIN_KEY)
        .send({ id: 1_999_000_000 + nextEventType++, name: 'Audited', account_id: c.tenant.accountId }),
  },
  'POST /admin/api_keys': {
    action: 'api_key.created',
    target: 'account',
    as: 'admin',
    run: (c) => c.call('post', '/admin/api_keys', ADMIN_KEY).send({ name: 'audited', account_id: c.tenant.accountId }),
  },
  'DELETE /admin/api_keys/{id}': {
    action: 'api_key.revoked',
    target: 'account',
    as: 'admin',
    setup: async (c) => {
      c.made.key = (await c.t.fixtures.apiKey(c.tenant.accountId)).id;
    },
    run: (c) => c.call('delete', `/admin/api_keys/${c.made.key}`, ADMIN_KEY),
  },
  'POST /admin/event_types': {
    action: 'event_type.created',
    target: 'none',
    as: 'admin',
    run: (c) => c.call('post', '/admin/event_types', ADMIN_KEY).send({ name: `audited_${Date.now()}_${nextEventType++}` }),
  },
  'PUT /admin/event_types/{name}': {
    action: 'event_type.updated',
    target: 'none',
    as: 'admin',
    run: (c) => c.call('put', '/admin/event_types/voice_campaign_activate', ADMIN_KEY).send({ description: `changed ${nextEventType++}` }),
  },
  'PUT /admin/operational_webhook': {
    action: 'operational_webhook.created',
    target: 'none',
    as: 'admin',
    setup: async (c) => void (await sql(c.t.db.url, 'DELETE FROM operational_webhook')),
    run: (c) =>
      c
        .call('put', '/admin/operational_webhook', ADMIN_KEY)
        .send({ url: 'https://ops.example.com/hook', headers: { 'X-Ops': 'ops-secret' } }),
  },
  'DELETE /admin/operational_webhook': {
    action: 'operational_webhook.deleted',
    target: 'none',
    as: 'admin',
    setup: async (c) =>
      void (await c.call('put', '/admin/operational_webhook', ADMIN_KEY).send({ url: 'https://ops.example.com/hook' }).expect(200)),
    run: (c) => c.call('delete', '/admin/operational_webhook', ADMIN_KEY),
  },
  'GET /admin/operational_webhook/secret': {
    action: 'operational_webhook.secret_read',
    target: 'none',
    as: 'admin',
    setup: async (c) =>
      void (await c.call('put', '/admin/operational_webhook', ADMIN_KEY).send({ url: 'https://ops.example.com/hook' }).expect(200)),
    run: (c) => c.call('get', '/admin/operational_webhook/secret', ADMIN_KEY),
  },
};

/** Operations that change something, but no configuration or access: publishing and the delivery engine's work. */
const NOT_AUDITED: Record<string, string> = {
  'POST /application/{application_id}/events': 'publishes an event',
  'POST /application/{application_id}/events/batch': 'publishes events',
  'POST /application/{application_id}/events/{event_id}/replay': 'publishes a stored event again',
  'POST /application/{application_id}/webhook/test': 'publishes a test event',
  'POST /application/{application_id}/deliveries/{delivery_id}/retry': 'one more attempt of a delivery',
  'POST /application/{application_id}/deliveries/recover': 'more attempts of failed deliveries',
  'POST /application/{application_id}/webhook/subscription/{subscription}/filter/test': 'tries a filter on stored events, changing nothing',
};

/** Reads that are audited: handing out a signing secret is handing out trust. */
const AUDITED_READS = ['GET /application/{application_id}/webhook/secret', 'GET /admin/operational_webhook/secret'];

/** The account and application a scenario's record should name. */
function about(scenario: Scenario, c: Context, res: Response): { account_id: string | null; application_id: number | null } {
  switch (scenario.target) {
    case 'application':
      return { account_id: c.tenant.accountId, application_id: c.tenant.applicationId };
    case 'account':
      return { account_id: c.tenant.accountId, application_id: null };
    case 'made':
      return scenario.action === 'account.created'
        ? { account_id: res.body.data.id, application_id: null }
        : { account_id: res.body.data.account_id, application_id: res.body.data.id };
    case 'none':
      return { account_id: null, application_id: null };
  }
}

/** Everything a change can touch, to show that a change whose record cannot be written changes nothing. */
const TABLES = [
  'accounts',
  'applications',
  'api_keys',
  'event_types',
  'webhooks',
  'webhook_secrets',
  'webhook_throttles',
  'subscriptions',
  'portal_links',
  'operational_webhook',
  'events',
  'deliveries',
  'delivery_queue',
  'audit_log',
];

describe('audit log (PRODUCT.md §16)', () => {
  let t: TestApp;
  /** Every key, token and secret handed out in this file: none may appear in a record. */
  const secrets = new Set<string>(['secret-token', 'ops-secret', ADMIN_KEY]);

  const records = () => sql(t.db.url, `SELECT id, row_to_json(a)::text AS json FROM audit_log a ORDER BY id`);
  const recordsOf = async (applicationId: number) =>
    (await t.http.get(`/application/${applicationId}/audit`).set('Authorization', ADMIN_KEY).expect(200)).body.data as AuditRecord[];
  const snapshot = async () => {
    const tables: Record<string, Row[]> = {};
    for (const table of TABLES) tables[table] = await sql(t.db.url, `SELECT row_to_json(x)::text AS row FROM ${table} x ORDER BY 1`);
    return tables;
  };
  const remember = (res: Response) => {
    const text = JSON.stringify(res.body ?? {});
    for (const found of text.match(/\b(?:hk|hp)_[A-Za-z0-9_-]{43}\b|whsec_[A-Za-z0-9+/=]+/g) ?? []) secrets.add(found);
  };

  const context = async (): Promise<Context> => {
    const tenant = await t.fixtures.tenantWithWebhook();
    secrets.add(tenant.key);
    return { t, tenant, made: {}, call: (method, path, key) => t.http[method](path).set('Authorization', key ?? tenant.key) };
  };

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe('every operation that changes configuration or access', () => {
    let documented: string[];

    beforeAll(async () => {
      const doc = (await t.http.get('/docs-json')).body as { paths: Record<string, Record<string, unknown>> };
      documented = Object.entries(doc.paths).flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      );
    });

    it('has a scenario here, or a reason it changes none, for each mutating operation of the OpenAPI document', () => {
      const mutating = documented.filter((operation) => /^(PUT|POST|DELETE|PATCH) /.test(operation));
      const unaccounted = mutating.filter((operation) => !(operation in SCENARIOS) && !(operation in NOT_AUDITED));
      expect(unaccounted).toEqual([]);
      const expected = [...mutating.filter((operation) => operation in SCENARIOS), ...AUDITED_READS].sort();
      expect(Object.keys(SCENARIOS).sort()).toEqual(expected);
      for (const read of AUDITED_READS) expect(documented).toContain(read);
    });

    it.each(Object.keys(SCENARIOS))('%s writes exactly one record, in its own transaction, and changes no other', async (operation) => {
      const scenario = SCENARIOS[operation];
      const c = await context();
      await scenario.setup?.(c);

      // A change whose record cannot be written is not made: the same operation with the insert refused.
      const before = await snapshot();
      await sql(
        t.db.url,
        `CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RAISE EXCEPTION ''no audit'' USING ERRCODE = ''XX000''; END';
         CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_audit()`,
      );
      try {
        expectError(await scenario.run(c), 500, '500-00');
      } finally {
        await sql(t.db.url, 'DROP TRIGGER refuse_audit ON audit_log; DROP FUNCTION refuse_audit()');
      }
      expect(await snapshot()).toEqual(before);

      const earlier = await records();
      const res = await scenario.run(c);
      remember(res);
      if (res.status >= 300) throw new Error(`${operation}: ${res.status} ${JSON.stringify(res.body)}`);
      const after = await records();
      // No record changed or went; exactly one came.
      expect(after.slice(0, earlier.length)).toEqual(earlier);
      expect(after).toHaveLength(earlier.length + 1);

      const [record] = (await t.http.get('/admin/audit?limit=1').set('Authorization', ADMIN_KEY).expect(200)).body.data as AuditRecord[];
      expect(record.id).toBe(after[after.length - 1].id);
      expect(record).toMatchObject({
        action: scenario.action,
        request_id: res.headers['x-request-id'],
        actor:
          scenario.as === 'admin'
            ? { type: 'admin_key', id: 'key_bootstrap_admin', prefix: bootstrapKeyLabel(ADMIN_KEY) }
            : { type: 'api_key', id: expect.stringMatching(/^key_/), prefix: c.tenant.key.slice(0, 9) },
        ...about(scenario, c, res),
      });
      expect(Date.now() - Date.parse(record.at)).toBeLessThan(60_000);
    });

    it('writes no key, token, secret or header value into any record', async () => {
      const everything = (await records()).map((row) => row.json as string).join('\n');
      expect(everything.length).toBeGreaterThan(0);
      for (const secret of secrets) expect(everything).not.toContain(secret);
      expect(everything).not.toMatch(/whsec_|\b(?:hk|hp)_[A-Za-z0-9_-]{43}\b/);
    });
  });

  describe('what a record says', () => {
    it('names the fields that changed, before and after, with header names and never their values', async () => {
      const tenant = await t.fixtures.tenant();
      const path = `/application/${tenant.applicationId}/webhook`;
      const created = await t.http.put(path).set('Authorization', tenant.key).send(VALID_WEBHOOK).expect(200);
      const changed = await t.http
        .put(path)
        .set('Authorization', tenant.key)
        .send({ ...VALID_WEBHOOK, retry_enabled: 0, headers: { 'X-Api-Token': 'another-secret', 'X-Region': 'eu' } })
        .expect(200);

      const [update, creation] = await recordsOf(tenant.applicationId);
      expect(creation).toEqual({
        id: expect.stringMatching(/^aud_[0-9a-z]{26}$/),
        at: expect.any(String),
        actor: { type: 'api_key', id: expect.stringMatching(/^key_/), prefix: tenant.key.slice(0, 9) },
        action: 'webhook.created',
        account_id: tenant.accountId,
        application_id: tenant.applicationId,
        request_id: created.headers['x-request-id'],
        changes: {
          url: [null, VALID_WEBHOOK.url],
          retry_enabled: [null, 1],
          'retry_config.retry_value': [null, 30],
          'retry_config.max_retries': [null, 5],
          'retry_config.backoff_type': [null, 'multiplier'],
          'retry_config.backoff_value': [null, 2],
          'headers.X-Api-Token': [null, REDACTED],
        },
      });
      expect(update).toMatchObject({
        action: 'webhook.updated',
        request_id: changed.headers['x-request-id'],
        changes: { retry_enabled: [1, 0], 'headers.X-Api-Token': [REDACTED, REDACTED], 'headers.X-Region': [null, REDACTED] },
      });
      expect(Object.keys(update.changes)).toEqual(['retry_enabled', 'headers.X-Api-Token', 'headers.X-Region']);
    });

    it('keeps a header named after an Object.prototype member, as a name', async () => {
      const tenant = await t.fixtures.tenant();
      await t.http
        .put(`/application/${tenant.applicationId}/webhook`)
        .set('Authorization', tenant.key)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ ...VALID_WEBHOOK, headers: JSON.parse('{"__proto__":"hidden","constructor":"also"}') }))
        .expect(200);
      const [record] = await recordsOf(tenant.applicationId);
      expect(record.changes['headers.__proto__']).toEqual([null, REDACTED]);
      expect(record.changes['headers.constructor']).toEqual([null, REDACTED]);
    });

    it('names a portal link as the actor when the customer acts through the portal, and the portal can read its log', async () => {
      const tenant = await t.fixtures.tenantWithWebhook();
      const link = await t.http
        .post(`/application/${tenant.applicationId}/portal_links`)
        .set('Authorization', tenant.key)
        .send({})
        .expect(201);
      const token = link.body.data.token as string;
      secrets.add(token);
      const linkId = (await sql(t.db.url, 'SELECT id FROM portal_links WHERE application_id = $1', [tenant.applicationId]))[0].id;

      await t.http
        .put(`/application/${tenant.applicationId}/webhook/subscription/acw_start`)
        .set('Authorization', token)
        .send({})
        .expect(200);
      const seen = await t.http.get(`/application/${tenant.applicationId}/audit`).set('Authorization', token).expect(200);
      expect(seen.body.data[0]).toMatchObject({
        action: 'subscription.created',
        actor: { type: 'portal_link', id: linkId, prefix: null },
        changes: { 'acw_start.ensure_delivery': [null, false], 'acw_start.active': [null, true] },
      });
      expect(seen.body.data.map((record: AuditRecord) => record.action)).toEqual([
        'subscription.created',
        'portal_link.created',
        'webhook.created',
        'application.created',
      ]);
    });

    it('records a subscription filter as it was set, keys an Object.prototype member names included, and its removal', async () => {
      const tenant = await t.fixtures.tenantWithWebhook();
      const sub = `/application/${tenant.applicationId}/webhook/subscription/acw_start`;
      await t.http.put(sub).set('Authorization', tenant.key).send({}).expect(200);
      const filter = JSON.parse('{"$or":[{"queue.id":"q-1"},{"__proto__":{"$exists":true}}]}');
      await t.http
        .put(`${sub}/filter`)
        .set('Authorization', tenant.key)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ filter }))
        .expect(200);
      await t.http.delete(`${sub}/filter`).set('Authorization', tenant.key).expect(200);
      const [removed, set] = await recordsOf(tenant.applicationId);
      expect(set).toMatchObject({ action: 'subscription.filter_updated' });
      expect(JSON.stringify(set.changes)).toBe(JSON.stringify({ 'acw_start.filter': [null, filter] }));
      expect(removed).toMatchObject({ action: 'subscription.filter_deleted' });
      expect(JSON.stringify(removed.changes)).toBe(JSON.stringify({ 'acw_start.filter': [filter, null] }));

      // A subscription deleted with its filter: the record says the filter went with it.
      await t.http
        .put(`${sub}/filter`)
        .set('Authorization', tenant.key)
        .send({ filter: { 'queue.id': 'q-2' } })
        .expect(200);
      await t.http.delete(sub).set('Authorization', tenant.key).expect(200);
      const [deleted] = await recordsOf(tenant.applicationId);
      expect(deleted).toMatchObject({
        action: 'subscription.deleted',
        changes: {
          'acw_start.ensure_delivery': [false, null],
          'acw_start.active': [true, null],
          'acw_start.filter': [{ 'queue.id': 'q-2' }, null],
        },
      });
    });

    it('records an API key by id, name and prefix, and its revocation by its id', async () => {
      const accountId = await t.fixtures.account();
      const created = await t.http
        .post('/admin/api_keys')
        .set('Authorization', ADMIN_KEY)
        .send({ account_id: accountId, name: 'ci' })
        .expect(201);
      const { id, prefix, key } = created.body.data;
      await t.http.delete(`/admin/api_keys/${id}`).set('Authorization', ADMIN_KEY).expect(200);
      const again = await t.http.delete(`/admin/api_keys/${id}`).set('Authorization', ADMIN_KEY).expect(200);

      const listed = (await t.http.get(`/admin/audit?account_id=${accountId}`).set('Authorization', ADMIN_KEY).expect(200)).body.data;
      expect(listed.map((record: AuditRecord) => record.action)).toEqual([
        'api_key.revoked',
        'api_key.revoked',
        'api_key.created',
        'account.created',
      ]);
      expect(listed[2].changes).toEqual({
        id: [null, id],
        name: [null, 'ci'],
        prefix: [null, prefix],
        scope: [null, 'account'],
        account_id: [null, accountId],
      });
      expect(listed[1].changes).toEqual({ [`${id}.revoked_at`]: [null, again.body.data.revoked_at] });
      // Revoking a revoked key is recorded too (who tried), and changes nothing.
      expect(listed[0].changes).toEqual({});
      expect(JSON.stringify(listed)).not.toContain(key);
    });

    it('records each change of endpoint health, and a second disable as no change', async () => {
      const tenant = await t.fixtures.tenantWithWebhook();
      const health = (action: string) =>
        t.http.post(`/application/${tenant.applicationId}/webhook/${action}`).set('Authorization', tenant.key).expect(200);
      const disabled = await health('disable');
      await health('disable');
      await health('enable');
      const [enabled, twice, once] = await recordsOf(tenant.applicationId);
      expect(once.changes).toEqual({
        state: ['active', 'disabled'],
        disabled_at: [null, disabled.body.data.disabled_at],
        disabled_reason: [null, 'manual'],
      });
      expect(twice).toMatchObject({ action: 'webhook.disabled', changes: {} });
      expect(enabled).toMatchObject({
        action: 'webhook.enabled',
        changes: { state: ['disabled', 'active'], disabled_at: [disabled.body.data.disabled_at, null], disabled_reason: ['manual', null] },
      });
    });

    it('names exactly what each of many concurrent changes replaced: every record’s before is the previous one’s after', async () => {
      const tenant = await t.fixtures.tenantWithWebhook();
      const urls = Array.from({ length: 6 }, (_, n) => `https://example.com/concurrent/${n}`);
      const answers = await Promise.all(
        urls.map((url) =>
          t.http
            .put(`/application/${tenant.applicationId}/webhook`)
            .set('Authorization', tenant.key)
            .send({ ...VALID_WEBHOOK, url }),
        ),
      );
      expect(answers.map((res) => res.status)).toEqual(urls.map(() => 200));
      const toggles = await Promise.all(
        [true, false, true, false].map((active) =>
          t.http
            .put(`/application/${tenant.applicationId}/webhook/subscription/acw_start`)
            .set('Authorization', tenant.key)
            .send({ active }),
        ),
      );
      expect(toggles.map((res) => res.status)).toEqual([200, 200, 200, 200]);

      const oldestFirst = (await recordsOf(tenant.applicationId)).reverse();
      const chain = (action: string, field: string) =>
        oldestFirst.filter((record) => record.action.startsWith(action) && field in record.changes).map((record) => record.changes[field]);
      const moves = chain('webhook.', 'url');
      expect(moves).toHaveLength(urls.length + 1);
      for (let n = 1; n < moves.length; n++) expect(moves[n][0]).toBe(moves[n - 1][1]);
      expect(new Set(moves.slice(1).map(([, after]) => after))).toEqual(new Set(urls));

      const subscriptions = oldestFirst.filter((record) => record.action.startsWith('subscription.'));
      expect(subscriptions.map((record) => record.action)).toEqual(['subscription.created', ...Array(3).fill('subscription.updated')]);
      // Each update names the flag only when it really changed from the state the previous one left.
      let active: unknown = subscriptions[0].changes['acw_start.active'][1];
      for (const record of subscriptions.slice(1)) {
        const change = record.changes['acw_start.active'];
        if (change) {
          expect(change[0]).toBe(active);
          active = change[1];
        }
      }
    });

    it('writes no record for a refused or failed change, nor for a read', async () => {
      const tenant = await t.fixtures.tenantWithWebhook();
      const other = await t.fixtures.tenant();
      const before = await records();
      const app = `/application/${tenant.applicationId}`;
      expectError(
        await t.http
          .put(`${app}/webhook`)
          .set('Authorization', tenant.key)
          .send({ ...VALID_WEBHOOK, url: 'ftp://x' }),
        400,
        '400-05',
      );
      expectError(await t.http.put(`${app}/webhook/subscription/no_such_event`).set('Authorization', tenant.key).send({}), 400, '400-04');
      expectError(await t.http.delete(`${app}/webhook/subscription/acw_start`).set('Authorization', tenant.key), 404, '404-03');
      expectError(await t.http.put(`${app}/webhook/throttle`).set('Authorization', tenant.key).send({ per_second: 0 }), 400, '400-02');
      expectError(await t.http.put(`${app}/webhook`).set('Authorization', other.key).send(VALID_WEBHOOK), 403, '403-03');
      expectError(await t.http.get(`/application/${other.applicationId}/webhook/secret`).set('Authorization', other.key), 404, '404-02');
      expectError(await t.http.delete('/admin/api_keys/key_nope').set('Authorization', ADMIN_KEY), 404, '404-06');
      expectError(
        await t.http
          .post('/admin/applications')
          .set('Authorization', ADMIN_KEY)
          .send({ id: tenant.applicationId, name: 'x', account_id: tenant.accountId }),
        409,
        '409-00',
      );
      expectError(await t.http.post('/admin/event_types').set('Authorization', ADMIN_KEY).send({ name: 'acw_start' }), 409, '409-00');
      for (const read of ['/webhook', '/webhook/subscription', '/webhook/status', '/webhook/throttle', '/deliveries', '/audit']) {
        await t.http.get(`${app}${read}`).set('Authorization', tenant.key).expect(200);
      }
      expect(await records()).toEqual(before);
    });

    it('records a change of HERALD_ADMIN_KEY once, as Herald itself, and a start-up that changes nothing not at all', async () => {
      const replacement = 'audit-replacement-admin-key-0000';
      const count = async () =>
        (await sql(t.db.url, `SELECT count(*)::int AS n FROM audit_log WHERE actor_type = 'system'`))[0].n as number;
      const before = await count();
      for (const key of [replacement, replacement, ADMIN_KEY]) {
        const other = await createTestApp({ databaseUrl: t.db.url, env: { HERALD_ADMIN_KEY: key } });
        await other.app.close();
      }
      expect(await count()).toBe(before + 2);
      const [restored, changed] = (
        await t.http.get('/admin/audit?action=api_key.updated&limit=2').set('Authorization', ADMIN_KEY).expect(200)
      ).body.data as AuditRecord[];
      expect(changed).toMatchObject({
        actor: { type: 'system', id: 'HERALD_ADMIN_KEY', prefix: null },
        request_id: null,
        changes: { prefix: [bootstrapKeyLabel(ADMIN_KEY), bootstrapKeyLabel(replacement)] },
      });
      expect(restored.changes).toEqual({ prefix: [bootstrapKeyLabel(replacement), bootstrapKeyLabel(ADMIN_KEY)] });
    });
  });

  describe('the routes', () => {
    let tenant: Tenant;
    beforeAll(async () => {
      tenant = await t.fixtures.tenantWithWebhook();
      for (let i = 0; i < 5; i++) {
        await t.http
          .put(`/application/${tenant.applicationId}/webhook/throttle`)
          .set('Authorization', tenant.key)
          .send({ per_second: 10 + i });
      }
    });
    const list = (query: string, key = tenant.key) =>
      t.http.get(`/application/${tenant.applicationId}/audit${query}`).set('Authorization', key);

    it('pages newest first with a cursor, and filters by action', async () => {
      const all = (await list('').expect(200)).body;
      expect(all.data.map((record: AuditRecord) => record.action)).toEqual([
        ...Array(5).fill('webhook.throttle_updated'),
        'webhook.created',
        'application.created',
      ]);
      expect(all.next_cursor).toBeNull();
      const ids = all.data.map((record: AuditRecord) => record.id);
      expect([...ids].sort().reverse()).toEqual(ids);

      const first = (await list('?limit=3').expect(200)).body;
      expect(first.data.map((record: AuditRecord) => record.id)).toEqual(ids.slice(0, 3));
      const second = (await list(`?limit=3&cursor=${first.next_cursor}`).expect(200)).body;
      expect(second.data.map((record: AuditRecord) => record.id)).toEqual(ids.slice(3, 6));
      const third = (await list(`?limit=3&cursor=${second.next_cursor}`).expect(200)).body;
      expect(third).toMatchObject({ data: [{ id: ids[6] }], next_cursor: null });

      const throttles = (await list('?action=webhook.throttle_updated&limit=2').expect(200)).body;
      expect(throttles.data.map((record: AuditRecord) => record.changes)).toEqual([{ per_second: [13, 14] }, { per_second: [12, 13] }]);
    });

    it('refuses an action, cursor or limit it does not know (400-03)', async () => {
      for (const query of [
        '?action=webhook.exploded',
        '?cursor=evt_01jd8x6q3k2m4n5p6r7s8t9v0w',
        '?cursor=aud_x',
        '?limit=0',
        '?limit=101',
        '?limit=ten',
      ]) {
        const res = await list(query);
        expectError(res, 400, '400-03');
      }
      expect(AUDIT_ACTIONS).toContain('webhook.throttle_updated');
    });

    it('is the application’s: another account’s key gets 403-03, and the admin route needs an admin key', async () => {
      const stranger = await t.fixtures.tenant();
      expectError(await list('', stranger.key), 403, '403-03');
      expectError(await t.http.get('/admin/audit').set('Authorization', tenant.key), 403, '403-04');
    });

    it('lets the operator narrow the whole log to an account, an application or an action', async () => {
      const byApplication = (
        await t.http.get(`/admin/audit?application_id=${tenant.applicationId}`).set('Authorization', ADMIN_KEY).expect(200)
      ).body;
      expect(byApplication.data).toHaveLength(7);
      const byAccount = (await t.http.get(`/admin/audit?account_id=${tenant.accountId}`).set('Authorization', ADMIN_KEY).expect(200)).body;
      // The application's seven, with the account's own: the account and its key.
      expect(byAccount.data.map((record: AuditRecord) => record.action)).toEqual([
        ...Array(5).fill('webhook.throttle_updated'),
        'webhook.created',
        'api_key.created',
        'application.created',
        'account.created',
      ]);
      const combined = (
        await t.http
          .get(`/admin/audit?account_id=${tenant.accountId}&application_id=${tenant.applicationId}&action=webhook.created`)
          .set('Authorization', ADMIN_KEY)
          .expect(200)
      ).body;
      expect(combined.data).toHaveLength(1);
      for (const query of [
        '?account_id=nope',
        '?application_id=0',
        '?application_id=2147483648',
        '?application_id=01',
        '?action=',
        '?cursor=aud_',
      ]) {
        expectError(await t.http.get(`/admin/audit${query}`).set('Authorization', ADMIN_KEY), 400, '400-03');
      }
    });
  });
});

interface AuditRecord {
  id: string;
  at: string;
  actor: { type: string; id: string; prefix: string | null };
  action: string;
  account_id: string | null;
  application_id: number | null;
  request_id: string | null;
  changes: Record<string, [unknown, unknown]>;
}
