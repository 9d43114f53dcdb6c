import { createTestApp, TestApp } from './support/test-app';
import { expectError } from './support/expect-error';
import { sql } from '@herald/database/testing';

interface OpenApiOperation {
  requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
  security?: unknown[];
}
type OpenApi = {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

/** Every operation Herald serves behind a key, with the request body schema it must document. */
const OPERATIONS: [method: string, path: string, requestBody: string | null][] = [
  ['put', '/application/{application_id}/webhook', 'UpsertWebhookRequest'],
  ['get', '/application/{application_id}/webhook', null],
  ['delete', '/application/{application_id}/webhook', null],
  ['get', '/application/{application_id}/webhook/retry_schedule', null],
  ['put', '/application/{application_id}/webhook/throttle', 'SetWebhookThrottleRequest'],
  ['get', '/application/{application_id}/webhook/throttle', null],
  ['get', '/application/{application_id}/webhook/status', null],
  ['post', '/application/{application_id}/webhook/disable', null],
  ['post', '/application/{application_id}/webhook/enable', null],
  ['get', '/application/{application_id}/webhook/secret', null],
  ['post', '/application/{application_id}/webhook/secret/rotate', null],
  ['get', '/application/{application_id}/webhook/subscription', null],
  ['put', '/application/{application_id}/webhook/subscription/{subscription}', 'UpsertSubscriptionRequest'],
  ['delete', '/application/{application_id}/webhook/subscription/{subscription}', null],
  ['post', '/application/{application_id}/events', 'PublishEventRequest'],
  ['post', '/application/{application_id}/events/batch', 'PublishEventBatchRequest'],
  ['post', '/application/{application_id}/portal_links', 'CreatePortalLinkRequest'],
  ['delete', '/application/{application_id}/portal_links', null],
  ['get', '/application/{application_id}/audit', null],
  ['get', '/application/{application_id}/stats', null],
  ['get', '/application/{application_id}/webhook/subscription/{subscription}/filter', null],
  ['put', '/application/{application_id}/webhook/subscription/{subscription}/filter', 'PutSubscriptionFilterRequest'],
  ['delete', '/application/{application_id}/webhook/subscription/{subscription}/filter', null],
  ['post', '/application/{application_id}/webhook/subscription/{subscription}/filter/test', 'TestSubscriptionFilterRequest'],
  ['get', '/application/{application_id}/events', null],
  ['get', '/application/{application_id}/events/{event_id}', null],
  ['post', '/application/{application_id}/events/{event_id}/replay', null],
  ['post', '/application/{application_id}/webhook/test', null],
  ['get', '/application/{application_id}/deliveries', null],
  ['get', '/application/{application_id}/deliveries/counts', null],
  ['post', '/application/{application_id}/deliveries/recover', 'RecoverDeliveriesRequest'],
  ['get', '/application/{application_id}/deliveries/{delivery_id}', null],
  ['post', '/application/{application_id}/deliveries/{delivery_id}/retry', null],
  ['get', '/error_codes', null],
  ['get', '/error_codes/{code}', null],
  ['get', '/event_types', null],
  ['get', '/event_types/{name}', null],
  ['get', '/applications', null],
  ['get', '/application/{application_id}', null],
  ['put', '/admin/operational_webhook', 'UpsertOperationalWebhookRequest'],
  ['get', '/admin/operational_webhook', null],
  ['delete', '/admin/operational_webhook', null],
  ['get', '/admin/operational_webhook/secret', null],
  ['get', '/admin/audit', null],
  ['get', '/admin/accounts', null],
  ['get', '/admin/applications', null],
  ['get', '/admin/api_keys', null],
  ['get', '/admin/accounts/{id}', null],
  ['get', '/admin/applications/{id}', null],
  ['get', '/admin/api_keys/{id}', null],
  ['post', '/admin/accounts', 'CreateAccountRequest'],
  ['post', '/admin/applications', 'CreateApplicationRequest'],
  ['post', '/admin/api_keys', 'CreateApiKeyRequest'],
  ['delete', '/admin/api_keys/{id}', null],
  ['post', '/admin/event_types', 'CreateEventTypeRequest'],
  ['put', '/admin/event_types/{name}', 'UpdateEventTypeRequest'],
];

/** The probes orchestrators and Prometheus call without a key, with the media type of their 200. */
const PUBLIC_OPERATIONS: [method: string, path: string, mediaType: string][] = [
  ['get', '/healthz', 'application/json'],
  ['get', '/readyz', 'application/json'],
  ['get', '/metrics', 'text/plain'],
];

describe('health, readiness and API documentation', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('/healthz answers while the process lives', async () => {
    const res = await t.http.get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('/readyz answers 200 when migrations are applied and 503-00 naming the one that is not', async () => {
    expect((await t.http.get('/readyz')).body).toEqual({ status: 'ready' });
    const [{ migration_name }] = await sql<{ migration_name: string }>(t.db.url, 'SELECT migration_name FROM _prisma_migrations LIMIT 1');
    await sql(t.db.url, 'UPDATE _prisma_migrations SET finished_at = NULL WHERE migration_name = $1', [migration_name]);
    try {
      const res = await t.http.get('/readyz');
      expectError(res, 503, '503-00');
      expect(res.body.error.message).toContain(migration_name);
      expect(res.headers['retry-after']).toBe('5');
    } finally {
      await sql(t.db.url, 'UPDATE _prisma_migrations SET finished_at = now() WHERE migration_name = $1', [migration_name]);
    }
  });

  it('/docs serves Swagger UI and its assets from the package (no CDN)', async () => {
    const page = await t.http.get('/docs');
    expect(page.status).toBe(200);
    expect(page.text).toContain('swagger-ui');
    expect(page.text).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs)/);
    for (const asset of ['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js']) {
      const res = await t.http.get(asset);
      expect(res.status).toBe(200);
      expect(Number(res.headers['content-length'] ?? res.text?.length ?? 0)).toBeGreaterThan(1000);
    }
  });

  describe('/docs-json', () => {
    let doc: OpenApi;
    beforeAll(async () => {
      doc = (await t.http.get('/docs-json')).body;
    });

    it('documents exactly the operations Herald serves, the probes included', () => {
      const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
      expect(documented.sort()).toEqual([...OPERATIONS, ...PUBLIC_OPERATIONS].map(([m, p]) => `${m} ${p}`).sort());
    });

    it.each(PUBLIC_OPERATIONS)('%s %s is documented as public, with its success body and error schemas', (method, path, mediaType) => {
      const operation = doc.paths[path][method];
      expect(operation.security).toEqual([]);
      expect(operation.requestBody).toBeUndefined();
      expect(Object.keys(operation.responses['200'].content ?? {})).toEqual([mediaType]);
      const errors = Object.entries(operation.responses).filter(([status]) => /^[45]/.test(status));
      expect(errors.map(([status]) => status)).toEqual(expect.arrayContaining(['400', '500']));
      expect(errors.map(([status]) => status)).not.toContain('403');
      for (const [, response] of errors) {
        expect(response.content?.['application/json'].schema.$ref).toBe('#/components/schemas/ErrorResponse');
      }
    });

    it.each(OPERATIONS)('%s %s has its request, success and error schemas', (method, path, requestBody) => {
      const operation = doc.paths[path][method];
      if (requestBody) {
        expect(operation.requestBody?.content['application/json'].schema.$ref).toBe(`#/components/schemas/${requestBody}`);
      } else {
        expect(operation.requestBody).toBeUndefined();
      }
      const success = Object.entries(operation.responses).filter(([status]) => status.startsWith('2'));
      expect(success).toHaveLength(1);
      expect(success[0][1].content?.['application/json'].schema.$ref).toMatch(/^#\/components\/schemas\//);
      const errors = Object.entries(operation.responses).filter(([status]) => /^[45]/.test(status));
      expect(errors.map(([status]) => status)).toEqual(expect.arrayContaining(['403', '500', '503']));
      for (const [, response] of errors) {
        expect(response.content?.['application/json'].schema.$ref).toBe('#/components/schemas/ErrorResponse');
      }
      expect(operation.security).toEqual([{ 'api-key': [] }]);
    });

    it('declares the API key scheme and the error envelope', () => {
      expect(doc.components.securitySchemes['api-key']).toEqual({ type: 'apiKey', in: 'header', name: 'Authorization' });
      expect(doc.components.schemas.ErrorResponse).toBeDefined();
    });

    it('describes the seed shapes field by field', () => {
      const schemas = doc.components.schemas as Record<string, { properties: Record<string, unknown>; required?: string[] }>;
      expect(Object.keys(schemas.UpsertWebhookRequest.properties).sort()).toEqual(['headers', 'retry_config', 'retry_enabled', 'url']);
      expect(Object.keys(schemas.RetryConfigDto.properties).sort()).toEqual([
        'backoff_type',
        'backoff_value',
        'max_retries',
        'retry_value',
      ]);
      expect(Object.keys(schemas.WebhookResponse.properties).sort()).toEqual(['data', 'success']);
      expect(Object.keys(schemas.SubscriptionsResponse.properties).sort()).toEqual(['subscriptions', 'success']);
      expect(Object.keys(schemas.ErrorCodeDto.properties).sort()).toEqual(['code', 'message']);
    });
  });
});
