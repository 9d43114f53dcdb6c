import SwaggerParser from '@apidevtools/swagger-parser';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestApp, TestApp } from './support/test-app';

/**
 * The OpenAPI document at /docs-json, checked by two tools that are not Nest's (swagger-parser
 * validates it against the OpenAPI schema and specification; `redocly lint` applies its
 * recommended rules) and by what PRODUCT.md promises of it: literal `success` flags, integers
 * typed as integers, a server, the operational probes, and the headers every answer carries.
 */

type Json = Record<string, any>;
/** swagger-parser's own document type (from openapi-types, which it brings along). */
type ParserDocument = Exclude<Parameters<typeof SwaggerParser.validate>[1], string>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const REDOCLY_CONFIG = path.join(__dirname, 'openapi');

interface Located {
  where: string;
  status: string;
  response: Json;
}

describe('the OpenAPI document at /docs-json', () => {
  let t: TestApp;
  let doc: Json;
  beforeAll(async () => {
    t = await createTestApp();
    const res = await t.http.get('/docs-json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(() => t.close());

  /** What a `$ref` inside the document points at. */
  const resolve = (node: Json): Json => {
    if (typeof node?.$ref !== 'string') return node;
    return resolve(
      node.$ref
        .slice(2)
        .split('/')
        .reduce((at: Json, key: string) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc),
    );
  };
  const operations = (): { method: string; path: string; operation: Json }[] =>
    Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method) => ({ method, path, operation: item[method] })),
    );
  /** Every response the document describes: each operation's, and the reusable ones in components. */
  const responses = (): Located[] => [
    ...operations().flatMap(({ method, path, operation }) =>
      Object.entries<Json>(operation.responses).map(([status, response]) => ({
        where: `${method.toUpperCase()} ${path} ${status}`,
        status,
        response: resolve(response),
      })),
    ),
    ...Object.entries<Json>(doc.components.responses ?? {}).map(([name, response]) => ({
      where: `#/components/responses/${name}`,
      // A reusable error response names its code first, and a code's first three digits are its status.
      status: /^`(\d{3})-\d{2}`/.exec(response.description)?.[1] ?? '',
      response,
    })),
  ];
  /** Every object in the document, with its JSON pointer. */
  const walk = (node: unknown, pointer: string, visit: (node: Json, pointer: string) => void): void => {
    if (Array.isArray(node)) node.forEach((child, index) => walk(child, `${pointer}/${index}`, visit));
    else if (node && typeof node === 'object') {
      visit(node as Json, pointer);
      for (const [key, child] of Object.entries(node)) walk(child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, visit);
    }
  };

  it('is a valid OpenAPI document (@apidevtools/swagger-parser validate: schema and specification)', async () => {
    // validate() dereferences the object it is given, so it gets its own copy; only the
    // document's own references may be followed.
    const api = (await SwaggerParser.validate(structuredClone(doc) as ParserDocument, { resolve: { external: false } })) as Json;
    expect(api.openapi).toMatch(/^3\./);
    expect(Object.keys(api.paths)).toEqual(Object.keys(doc.paths));
  });

  it('passes `redocly lint` with the recommended rules: no error and no warning', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'herald-openapi-'));
    try {
      await writeFile(path.join(dir, 'openapi.json'), JSON.stringify(doc, null, 2));
      for (const file of ['redocly.yaml', '.redocly.lint-ignore.yaml'])
        await copyFile(path.join(REDOCLY_CONFIG, file), path.join(dir, file));
      const cli = path.join(path.dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
      const { code, stdout, stderr } = await run(
        process.execPath,
        [cli, 'lint', 'openapi.json', '--config', 'redocly.yaml', '--format=json'],
        {
          cwd: dir,
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
        },
      );
      let report: { totals: { errors: number; warnings: number; ignored: number }; problems: Json[] };
      try {
        report = JSON.parse(stdout);
      } catch {
        throw new Error(`redocly lint exited ${code} without a JSON report:\n${stdout}\n${stderr}`);
      }
      const problems = report.problems
        .filter((problem) => !problem.ignored)
        .map((problem) => `${problem.severity} ${problem.ruleId} at ${problem.location?.[0]?.pointer}: ${problem.message}`);
      expect(problems).toEqual([]);
      expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: 1 });
      expect(code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('types every `success` flag as the literal it is: true in success bodies, false in the error envelope', () => {
    const flags: string[] = [];
    for (const [name, schema] of Object.entries<Json>(doc.components.schemas)) {
      const success = schema.properties?.success;
      if (!success) continue;
      flags.push(name);
      expect({ name, success }).toEqual({ name, success: expect.objectContaining({ type: 'boolean', enum: [name !== 'ErrorResponse'] }) });
      expect({ name, required: schema.required }).toEqual({ name, required: expect.arrayContaining(['success']) });
    }
    expect(flags).toEqual(expect.arrayContaining(['ErrorResponse', 'WebhookResponse', 'SubscriptionsResponse', 'EventTypeListResponse']));

    // Every JSON success body that has the flag says true; every error body is the envelope.
    for (const { where, status, response } of responses()) {
      const schema = resolve(response.content?.['application/json']?.schema ?? {});
      if (/^[45]/.test(status)) expect({ where, success: schema.properties?.success?.enum }).toEqual({ where, success: [false] });
      else if (schema.properties?.success) expect({ where, success: schema.properties.success.enum }).toEqual({ where, success: [true] });
    }
  });

  it('types integers as integers: no schema anywhere in the document is `number`', () => {
    // Every numeric value Herald sends or takes is whole (ids, counts, seconds, milliseconds,
    // statuses). A field whose values can really be fractional may be `number`: exempt it here
    // by its pointer, with why.
    const numbers: string[] = [];
    walk(doc, '#', (node, pointer) => {
      if (node.type === 'number' || (Array.isArray(node.type) && node.type.includes('number'))) numbers.push(pointer);
    });
    expect(numbers).toEqual([]);

    const integers: string[] = [];
    walk(doc, '#', (node, pointer) => {
      if (node.type === 'integer') integers.push(pointer);
    });
    expect(integers).toEqual(
      expect.arrayContaining([
        '#/components/schemas/RetryConfigDto/properties/max_retries',
        '#/components/schemas/UpsertWebhookRequest/properties/retry_enabled',
        '#/components/schemas/RetryScheduleDto/properties/delays_seconds/items',
        '#/components/schemas/RetryScheduleDto/properties/total_seconds',
        '#/components/headers/Retry-After/schema',
      ]),
    );
  });

  it('names a server: `/`, the API wherever this document was fetched from', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  describe('the operational probes', () => {
    const jsonSchemaOf = (response: Json) => resolve(resolve(response).content['application/json'].schema);

    it('lists /healthz, /readyz and /metrics as public operations with their responses', () => {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        expect(Object.keys(doc.paths[path])).toEqual(['get']);
        expect({ path, security: doc.paths[path].get.security }).toEqual({ path, security: [] });
      }
      const healthz = doc.paths['/healthz'].get.responses;
      expect(jsonSchemaOf(healthz['200']).properties.status).toMatchObject({ type: 'string', enum: ['ok'] });

      const readyz = doc.paths['/readyz'].get.responses;
      expect(jsonSchemaOf(readyz['200']).properties.status).toMatchObject({ type: 'string', enum: ['ready'] });
      expect(readyz['503'].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorResponse');
      expect(Object.keys(readyz['503'].headers)).toEqual(expect.arrayContaining(['Retry-After', 'X-Request-Id']));

      const metrics = doc.paths['/metrics'].get.responses['200'];
      expect(Object.keys(metrics.content)).toEqual(['text/plain']);
      expect(metrics.content['text/plain'].schema).toEqual({ type: 'string' });
    });

    it('answer as the document says, without a key', async () => {
      const healthz = await t.http.get('/healthz');
      expect(healthz.status).toBe(200);
      expect(healthz.headers['content-type']).toMatch(/^application\/json/);
      expect(jsonSchemaOf(doc.paths['/healthz'].get.responses['200']).properties.status.enum).toContain(healthz.body.status);

      const readyz = await t.http.get('/readyz');
      expect(readyz.status).toBe(200);
      expect(readyz.headers['content-type']).toMatch(/^application\/json/);
      expect(jsonSchemaOf(doc.paths['/readyz'].get.responses['200']).properties.status.enum).toContain(readyz.body.status);

      const metrics = await t.http.get('/metrics');
      expect(metrics.status).toBe(200);
      expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
      expect(metrics.text).toContain('herald_http_request_duration_seconds');
      for (const res of [healthz, readyz, metrics]) expect(res.headers['x-request-id']).toMatch(/^req_/);
    });
  });

  describe('response headers', () => {
    const headerSchema = (response: Json, name: string): Json | undefined => {
      const header = response.headers?.[name];
      return header ? resolve(header).schema : undefined;
    };

    it('documents X-Request-Id on every response', () => {
      const all = responses();
      expect(all.length).toBeGreaterThan(100);
      const missing = all.filter(({ response }) => headerSchema(response, 'X-Request-Id')?.type !== 'string').map(({ where }) => where);
      expect(missing).toEqual([]);
    });

    it('documents Retry-After (whole seconds) on every 429 and 503, and a 429 on every route that takes a key', () => {
      const limited = responses().filter(({ status }) => status === '429' || status === '503');
      expect(limited.map(({ where }) => where)).toEqual(expect.arrayContaining(['GET /readyz 503', 'GET /event_types 429']));
      const missing = limited.filter(({ response }) => headerSchema(response, 'Retry-After')?.type !== 'integer').map(({ where }) => where);
      expect(missing).toEqual([]);

      const keyed = operations().filter(({ operation }) => JSON.stringify(operation.security) === JSON.stringify([{ 'api-key': [] }]));
      expect(keyed.length).toBeGreaterThan(10);
      const unlimited = keyed.filter(({ operation }) => !operation.responses['429']).map(({ method, path }) => `${method} ${path}`);
      expect(unlimited).toEqual([]);
    });

    it('documents Allow on the 405 every path answers for a method it does not take', () => {
      const refused = responses().filter(({ status }) => status === '405');
      expect(refused.map(({ where }) => where)).toContain('#/components/responses/MethodNotAllowed');
      for (const { where, response } of refused) {
        expect({ where, allow: headerSchema(response, 'Allow')?.type }).toEqual({ where, allow: 'string' });
        expect({ where, body: response.content['application/json'].schema.$ref }).toEqual({
          where,
          body: '#/components/schemas/ErrorResponse',
        });
      }
    });

    it('matches what the api sends: 405 with Allow naming the documented methods of the path, and X-Request-Id', async () => {
      const documentedMethods = (item: Json) => METHODS.filter((method) => item[method]).map((method) => method.toUpperCase());
      const templates = Object.entries<Json>(doc.paths).map(([template, item]) => ({
        pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        methods: documentedMethods(item),
      }));
      for (const [template, item] of Object.entries<Json>(doc.paths)) {
        expect(documentedMethods(item)).not.toContain('PATCH');
        const path = template.replace('{application_id}', '1').replace(/\{[^}]+\}/g, 'x');
        const res = await t.http.patch(path);
        expect({ template, status: res.status, code: res.body.error?.code }).toEqual({ template, status: 405, code: '405-00' });
        // A concrete path can fit more than one template (…/deliveries/recover is also …/deliveries/{delivery_id}).
        const expected = new Set(templates.filter(({ pattern }) => pattern.test(path)).flatMap(({ methods }) => methods));
        if (expected.has('GET')) expected.add('HEAD');
        expect({ template, allow: String(res.headers.allow).split(', ').sort() }).toEqual({ template, allow: [...expected].sort() });
        expect(res.headers['x-request-id']).toBe(res.body.request_id);
      }
    });
  });
});

/** Runs a command to its end, whatever its exit code, and hands back what it printed. */
function run(
  file: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { ...options, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}
