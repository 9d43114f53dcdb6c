import { createHeraldClient, unwrap } from '@herald/client';
import { cloneDatabase, TestDatabase, testServerUrl, testTemplateDatabase } from '@herald/database/testing';
import { OtlpReceiver, ReceivedSpan, Sink } from '@herald/testing';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPOSITORY_ROOT } from './support/layout';
import { HeraldProcess, startApi, startWorker, stop } from './support/processes';

/**
 * PRODUCT.md §16 "Traces", on the built api and worker processes: a request, its publish and each
 * delivery attempt in one trace (the caller's), exported over OTLP/HTTP to a receiver on
 * 127.0.0.1; the receiver of the webhook gets the attempt's `traceparent`. Without an OTLP
 * endpoint neither process loads any of OpenTelemetry.
 */
const ADMIN_KEY = 'traces-test-admin-key-0123456';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

/** A `--require` preload that writes every module the process loaded (require.cache) to `file` as it exits. */
function moduleRecorder(dir: string, name: string): { nodeArgs: string[]; loaded: () => string[] } {
  const file = path.join(dir, `${name}.modules.txt`);
  const preload = path.join(dir, `${name}.record-modules.js`);
  writeFileSync(
    preload,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(file)}, Object.keys(require.cache).join('\\n')));`,
  );
  return { nodeArgs: ['--require', preload], loaded: () => readFileSync(file, 'utf8').split('\n') };
}

/**
 * The one OpenTelemetry module Herald does not choose to load: prom-client (the /metrics of both
 * processes) requires its own `@opentelemetry/api` when it loads, for exemplars Herald never
 * turns on. It is the API's no-op surface only; no SDK, exporter or propagator comes with it.
 */
function promClientsOpenTelemetryApi(): string {
  const promClient = require.resolve('prom-client', { paths: [path.join(REPOSITORY_ROOT, 'apps', 'api')] });
  const api = require.resolve('@opentelemetry/api', { paths: [path.dirname(promClient)] });
  const marker = `${path.sep}@opentelemetry${path.sep}api${path.sep}`;
  return api.slice(0, api.indexOf(marker) + marker.length);
}

const openTelemetryModules = (modules: string[]) =>
  modules.filter((file) => file.includes(`${path.sep}@opentelemetry${path.sep}`) && !file.startsWith(promClientsOpenTelemetryApi()));
const packagesOf = (modules: string[]) =>
  [...new Set(modules.map((file) => /[\\/](@opentelemetry[\\/][^\\/]+)[\\/]/.exec(file)?.[1].replace('\\', '/') ?? ''))].sort();

describe('OpenTelemetry traces from the api and worker processes (PRODUCT.md §16)', () => {
  let db: TestDatabase;
  let sink: Sink;
  let dir: string;
  const running: HeraldProcess[] = [];

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    // Each webhook-id's first attempt is answered 503, its retry 200: two attempts per delivery.
    const seen = new Set<string>();
    sink = await new Sink((_n, request) => {
      const id = String(request.headers['webhook-id']);
      const first = !seen.has(id);
      seen.add(id);
      return { status: first ? 503 : 200 };
    }).start();
    dir = mkdtempSync(path.join(os.tmpdir(), 'herald-traces-'));
  });

  afterAll(async () => {
    await Promise.all(running.map(stop));
    await sink?.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const baseEnv = () => ({ DATABASE_URL: db.url, HERALD_ADMIN_KEY: ADMIN_KEY, HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8' });

  async function start(kind: 'api' | 'worker', name: string, env: Record<string, string>, nodeArgs: string[]): Promise<HeraldProcess> {
    const process = await (kind === 'api' ? startApi(name, env, nodeArgs) : startWorker(name, env, nodeArgs));
    running.push(process);
    return process;
  }

  /** An application with a webhook to the sink (retries 1 s apart), subscribed to acw_start. */
  async function application(api: HeraldProcess, name: string): Promise<number> {
    const herald = createHeraldClient({ baseUrl: api.url, apiKey: ADMIN_KEY });
    const { data: account } = await unwrap(herald.POST('/admin/accounts', { body: { name } }));
    const { data: app } = await unwrap(herald.POST('/admin/applications', { body: { name, account_id: account.id } }));
    const path = { application_id: app.id };
    await unwrap(
      herald.PUT('/application/{application_id}/webhook', {
        params: { path },
        body: {
          url: sink.url(`/hook/${app.id}`),
          retry_enabled: 1,
          retry_config: { retry_value: 1, max_retries: 3, backoff_type: 'linear', backoff_value: 0 },
          headers: {},
        },
      }),
    );
    await unwrap(
      herald.PUT('/application/{application_id}/webhook/subscription/{subscription}', {
        params: { path: { ...path, subscription: 'acw_start' } },
        body: { ensure_delivery: true },
      }),
    );
    return app.id;
  }

  /** POST …/events as the platform would, with `headers` (a traceparent, say); the answer's data. */
  async function publish(api: HeraldProcess, applicationId: number, headers: Record<string, string> = {}) {
    const response = await fetch(`${api.url}/application/${applicationId}/events`, {
      method: 'POST',
      headers: { authorization: ADMIN_KEY, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ event: 'acw_start', payload: { call_id: 'c-1' } }),
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { data: { id: string; deliveries: string[] } }).data;
  }

  const requestsTo = (applicationId: number) => sink.received.filter((request) => request.path === `/hook/${applicationId}`);

  async function attemptsReceived(applicationId: number, count: number) {
    const deadline = Date.now() + 20_000;
    while (requestsTo(applicationId).length < count) {
      if (Date.now() > deadline)
        throw new Error(`expected ${count} attempts at /hook/${applicationId}, got ${requestsTo(applicationId).length}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return requestsTo(applicationId);
  }

  it('without an OTLP endpoint, neither process loads any of OpenTelemetry, and receivers get no traceparent', async () => {
    const apiModules = moduleRecorder(dir, 'api-off');
    const workerModules = moduleRecorder(dir, 'worker-off');
    const api = await start('api', 'api-off', baseEnv(), apiModules.nodeArgs);
    const worker = await start('worker', 'worker-off', baseEnv(), workerModules.nodeArgs);
    const applicationId = await application(api, 'untraced');
    // Requests, a publish and both attempts of its delivery: every path a span would be made on.
    await publish(api, applicationId, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
    const attempts = await attemptsReceived(applicationId, 2);
    expect(attempts.map((attempt) => attempt.headers.traceparent)).toEqual([undefined, undefined]);
    expect(await stop(worker)).toBe(0);
    expect(await stop(api)).toBe(0);

    for (const recorder of [apiModules, workerModules]) {
      const modules = recorder.loaded();
      // The list is the real one: Herald's own runtime package is in it.
      expect(modules.some((file) => file.endsWith(path.join('runtime', 'dist', 'tracing', 'tracing.js')))).toBe(true);
      expect(openTelemetryModules(modules)).toEqual([]);
      // prom-client's copy is the one exception, and the filter above really did see it.
      expect(modules.some((file) => file.startsWith(promClientsOpenTelemetryApi()))).toBe(true);
    }
  });

  it('with one, a request, its publish and each attempt share the caller’s trace; the receiver gets the attempt’s traceparent', async () => {
    const otlp = await new OtlpReceiver().listen();
    try {
      // The api on the default protocol (http/protobuf), the worker on http/json: both encodings at once.
      const tracingEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${otlp.port}`, OTEL_BSP_SCHEDULE_DELAY: '100' };
      const apiModules = moduleRecorder(dir, 'api-on');
      const workerModules = moduleRecorder(dir, 'worker-on');
      const api = await start('api', 'api-on', { ...baseEnv(), ...tracingEnv }, apiModules.nodeArgs);
      const applicationId = await application(api, 'traced');

      // No worker runs yet: the attempts' parent can only come from the event's row.
      const published = await publish(api, applicationId, { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
      const worker = await start(
        'worker',
        'worker-on',
        { ...baseEnv(), ...tracingEnv, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' },
        workerModules.nodeArgs,
      );
      const attempts = await attemptsReceived(applicationId, 2);

      const inTrace = (spans: ReceivedSpan[]) => spans.filter((span) => span.traceId === CALLER_TRACE);
      const server = (await otlp.waitFor((spans) => inTrace(spans).filter((s) => s.kind === 2), 10_000))[0];
      const publishSpan = (await otlp.waitFor((spans) => inTrace(spans).filter((s) => s.kind === 4), 10_000))[0];
      const attemptSpans = await otlp.waitFor((spans) => {
        const found = inTrace(spans).filter((s) => s.kind === 3);
        return found.length >= 2 ? found : [];
      }, 10_000);

      expect(server).toMatchObject({ service: 'herald-api', parentSpanId: CALLER_SPAN, name: 'POST /application/:application_id/events' });
      expect(server.attributes).toMatchObject({
        'http.request.method': 'POST',
        'http.route': '/application/:application_id/events',
        'http.response.status_code': 202,
        'url.path': `/application/${applicationId}/events`,
        'url.scheme': 'http',
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(api.url).port),
      });

      expect(publishSpan).toMatchObject({ service: 'herald-api', parentSpanId: server.spanId, name: 'publish acw_start' });
      expect(publishSpan.attributes).toMatchObject({
        'herald.application_id': applicationId,
        'herald.event_type': 'acw_start',
        'herald.event_id': published.id,
        'herald.delivery_id': published.deliveries[0],
      });

      const byNumber = [...attemptSpans].sort((a, b) => Number(a.attributes['herald.attempt']) - Number(b.attributes['herald.attempt']));
      expect(byNumber.map((span) => span.attributes)).toEqual([
        expect.objectContaining({ 'herald.attempt': 1, 'http.response.status_code': 503, 'error.type': '503' }),
        expect.objectContaining({ 'herald.attempt': 2, 'http.response.status_code': 200 }),
      ]);
      expect(byNumber[1].attributes['error.type']).toBeUndefined();
      for (const span of byNumber) {
        expect(span).toMatchObject({ service: 'herald-worker', parentSpanId: publishSpan.spanId, name: 'deliver acw_start' });
        expect(span.attributes).toMatchObject({
          'herald.application_id': applicationId,
          'herald.event_type': 'acw_start',
          'herald.event_id': published.id,
          'herald.delivery_id': published.deliveries[0],
        });
      }
      // Each attempt's request carried its own span's traceparent.
      expect(attempts.map((attempt) => attempt.headers.traceparent)).toEqual(
        byNumber.map((span) => `00-${CALLER_TRACE}-${span.spanId}-01`),
      );

      expect(otlp.exports.every((e) => e.path === '/v1/traces')).toBe(true);
      const contentTypes = new Set(otlp.exports.map((e) => e.contentType));
      expect(contentTypes).toEqual(new Set(['application/x-protobuf', 'application/json']));

      expect(await stop(worker)).toBe(0);
      expect(await stop(api)).toBe(0);
      // Loaded only now, and only the chosen protocol's exporter.
      expect(packagesOf(openTelemetryModules(apiModules.loaded()))).toEqual(
        expect.arrayContaining(['@opentelemetry/api', '@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-proto']),
      );
      expect(packagesOf(openTelemetryModules(apiModules.loaded()))).not.toContain('@opentelemetry/exporter-trace-otlp-http');
      expect(packagesOf(openTelemetryModules(workerModules.loaded()))).toEqual(
        expect.arrayContaining(['@opentelemetry/api', '@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-http']),
      );
      expect(packagesOf(openTelemetryModules(workerModules.loaded()))).not.toContain('@opentelemetry/exporter-trace-otlp-proto');
    } finally {
      await otlp.close();
    }
  });
});
