import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CONSOLE_DIST_DIR } from '../src/console/console-routes';
import { expectError } from './support/expect-error';
import { createTestApp, TestApp } from './support/test-app';

/**
 * The console (apps/console) as the api serves it at /console (PRODUCT.md §12): index.html never
 * cached, hashed assets cached for a year, a strict Content-Security-Policy on both, no key
 * needed for the files themselves, nothing of it in the OpenAPI document, and a clear 404 — not
 * a 5xx — when the console was not built.
 */

const INDEX =
  '<!doctype html><html><head><script type="module" src="/console/assets/index-Ab12Cd34.js"></script></head><body></body></html>';
const SCRIPT = 'console.log("herald");\n';

function directives(csp: string | undefined): Map<string, string> {
  return new Map(
    (csp ?? '')
      .split(';')
      .map((part) => part.trim())
      .filter(Boolean)
      .map((part) => {
        const [name, ...values] = part.split(/\s+/);
        return [name, values.join(' ')] as [string, string];
      }),
  );
}

function expectStrictCsp(csp: string | undefined): void {
  const policy = directives(csp);
  expect(policy.get('default-src')).toBe("'self'");
  expect(policy.get('script-src')).toBe("'self'");
  expect(policy.get('style-src')).toBe("'self'");
  expect(policy.get('img-src')).toBe("'self' data:");
  expect(policy.get('connect-src')).toBe("'self'");
  expect(policy.get('object-src')).toBe("'none'");
  expect(policy.get('base-uri')).toBe("'none'");
  // The customer portal is meant to be framed by the platform's product.
  expect(policy.has('frame-ancestors')).toBe(true);
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
}

describe('the console at /console', () => {
  let t: TestApp;
  let dist: string;
  beforeAll(async () => {
    dist = mkdtempSync(path.join(tmpdir(), 'herald-console-'));
    mkdirSync(path.join(dist, 'assets'));
    writeFileSync(path.join(dist, 'index.html'), INDEX);
    writeFileSync(path.join(dist, 'assets', 'index-Ab12Cd34.js'), SCRIPT);
    writeFileSync(path.join(dist, 'assets', 'index-Ef56Gh78.css'), 'body{margin:0}\n');
    t = await createTestApp({ override: (builder) => builder.overrideProvider(CONSOLE_DIST_DIR).useValue(dist) });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dist, { recursive: true, force: true });
  });

  it.each(['/console', '/console/'])('GET %s answers index.html, never cached, without an API key', async (url) => {
    const res = await t.http.get(url);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html; charset=utf-8/);
    expect(res.text).toBe(INDEX);
    expect(res.headers['cache-control']).toBe('no-cache');
    expectStrictCsp(res.headers['content-security-policy']);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('serves hashed assets cached for a year, immutable, under the same policy', async () => {
    const js = await t.http.get('/console/assets/index-Ab12Cd34.js');
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect(js.text).toBe(SCRIPT);
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expectStrictCsp(js.headers['content-security-policy']);
    expect(js.headers['x-content-type-options']).toBe('nosniff');

    const css = await t.http.get('/console/assets/index-Ef56Gh78.css');
    expect(css.status).toBe(200);
    expect(css.headers['content-type']).toMatch(/^text\/css/);
    expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('answers an unknown asset, or a path outside assets, with the 404 envelope', async () => {
    expectError(await t.http.get('/console/assets/missing-0000.js'), 404, '404-00');
    expectError(await t.http.get('/console/settings'), 404, '404-00');
  });

  it('refuses to step out of the assets folder', async () => {
    expectError(await t.http.get('/console/assets/..%2findex.html'), 403, '403-00');
    expectError(await t.http.get('/console/assets/..%2f..%2fpackage.json'), 403, '403-00');
  });

  it('answers a method the console does not take with 405 and Allow', async () => {
    const res = await t.http.post('/console').send({});
    expectError(res, 405, '405-00');
    expect(res.headers.allow).toMatch(/GET/);
  });

  it('is not part of the OpenAPI document, and the API routes keep answering as before', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
    expectError(await t.http.get('/application/1/webhook'), 403, '403-01');
    expect((await t.http.get('/healthz')).status).toBe(200);
  });
});

describe('the console when it was not built', () => {
  let t: TestApp;
  beforeAll(async () => {
    const missing = path.join(tmpdir(), `herald-console-missing-${process.pid}`);
    t = await createTestApp({ override: (builder) => builder.overrideProvider(CONSOLE_DIST_DIR).useValue(missing) });
  });
  afterAll(() => t.close());

  it.each(['/console', '/console/', '/console/assets/index-Ab12Cd34.js'])(
    'GET %s is a 404 saying the console was not built',
    async (url) => {
      const res = await t.http.get(url);
      expectError(res, 404, '404-00');
      expect(res.body.error.message).toMatch(/console was not built/);
    },
  );
});
