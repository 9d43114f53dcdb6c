import { OtlpProtocol } from '@herald/core';
import { OtlpReceiver, ReceivedSpan } from '@herald/testing';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { NO_TRACING, startTracing, TracedRequest } from './tracing';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

/**
 * The OTLP exporters load node:http with a native `import()`, which jest's module sandbox cannot
 * run: each scenario runs in a Node process of its own against this package's build, with
 * `tracing` (startTracing's answer), `request(headers)`, `attempt(n)` and `answered(status)` in
 * scope, and prints what it returns as JSON.
 */
async function scenario<T>(
  protocol: OtlpProtocol,
  receiver: OtlpReceiver,
  service: string,
  body: string,
  env: NodeJS.ProcessEnv = {},
): Promise<T> {
  const script = `
    const { startTracing } = require(${JSON.stringify(path.resolve(__dirname, '../../dist/tracing/tracing.js'))});
    const request = (headers = {}) => ({
      method: 'POST', url: '/application/42/events?cursor=secret-ish',
      headers: { host: 'herald.example:8443', 'user-agent': 'platform/1.0', ...headers },
      scheme: 'http', httpVersion: '1.1', clientAddress: '10.1.2.3', requestId: 'req_0123',
    });
    const attempt = (number) => ({ applicationId: 42, eventType: 'acw_start', eventId: 'evt_1', deliveryId: 'dlv_1', number,
      destination: 'webhook', url: 'https://hooks.example/in?token=receiver-secret' });
    const answered = (status) => ({ status, excerpt: '', error: null, retryAfterSeconds: null, durationMs: 3 });
    (async () => {
      const tracing = await startTracing(${JSON.stringify({ tracesUrl: receiver.tracesUrl, protocol, serviceName: null })}, ${JSON.stringify(service)});
      const result = await (async () => { ${body} })();
      await tracing.shutdown();
      process.stdout.write(JSON.stringify(result ?? null));
    })().catch((error) => { console.error(error); process.exit(1); });`;
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['-e', script], { env: { PATH: process.env.PATH, ...env } }, (error, out, err) =>
      error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out),
    ),
  );
  return JSON.parse(stdout) as T;
}

const request = (headers: TracedRequest['headers'] = {}): TracedRequest => ({
  method: 'POST',
  url: '/application/42/events',
  headers,
  scheme: 'http',
  httpVersion: '1.1',
  clientAddress: undefined,
  requestId: 'req_0123',
});

describe('startTracing', () => {
  it('is NO_TRACING without an endpoint: spans that do nothing, no stored context, no headers', async () => {
    const tracing = await startTracing(null, 'herald-api');
    expect(tracing).toBe(NO_TRACING);
    expect(tracing.enabled).toBe(false);
    expect(tracing.startPublish(tracing.startRequest(request()), { applicationId: 1, eventTypes: ['a'] }).storedContext).toBeNull();
    const attempt = {
      applicationId: 1,
      eventType: 'a',
      eventId: 'evt_1',
      deliveryId: 'dlv_1',
      number: 1,
      destination: 'webhook',
      url: 'http://x/',
    };
    expect(tracing.startAttempt(`00-${CALLER_TRACE}-${CALLER_SPAN}-01`, attempt).headers).toEqual({});
  });

  describe.each<OtlpProtocol>(['http/json', 'http/protobuf'])('over %s', (protocol) => {
    let receiver: OtlpReceiver;
    beforeEach(async () => {
      receiver = await new OtlpReceiver().listen();
    });
    afterEach(() => receiver.close());

    it('exports a request, its publish and an attempt in the caller’s trace, each the child of the one before', async () => {
      const { enabled, storedContext, headers } = await scenario<{
        enabled: boolean;
        storedContext: string;
        headers: Record<string, string>;
      }>(
        protocol,
        receiver,
        'herald-api',
        `const requestSpan = tracing.startRequest(request({ traceparent: '00-${CALLER_TRACE}-${CALLER_SPAN}-01', tracestate: 'vendor=opaque' }));
         const publish = tracing.startPublish(requestSpan, { applicationId: 42, eventTypes: ['acw_start'] });
         publish.end({ eventIds: ['evt_1'], deliveryIds: ['dlv_1'] });
         requestSpan.end('/application/:application_id/events', 202);
         const attemptSpan = tracing.startAttempt(publish.storedContext, attempt(2));
         attemptSpan.end(answered(503));
         return { enabled: tracing.enabled, storedContext: publish.storedContext, headers: attemptSpan.headers };`,
      );
      expect(enabled).toBe(true);
      // The context a worker reads back from the event's row: the publish span, the caller's tracestate.
      expect(storedContext).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01 vendor=opaque$`));

      expect(receiver.exports.every((e) => e.path === '/v1/traces')).toBe(true);
      expect(receiver.exports[0].contentType).toBe(protocol === 'http/json' ? 'application/json' : 'application/x-protobuf');
      const [server] = named(receiver.spans, 'POST /application/:application_id/events');
      const [published] = named(receiver.spans, 'publish acw_start');
      const [delivered] = named(receiver.spans, 'deliver acw_start');

      expect(server).toMatchObject({ service: 'herald-api', traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN, kind: 2, statusCode: 0 });
      expect(server.attributes).toEqual({
        'http.request.method': 'POST',
        'url.path': '/application/42/events',
        'url.scheme': 'http',
        'network.protocol.version': '1.1',
        'server.address': 'herald.example',
        'server.port': 8443,
        'user_agent.original': 'platform/1.0',
        'client.address': '10.1.2.3',
        'herald.request_id': 'req_0123',
        'http.route': '/application/:application_id/events',
        'http.response.status_code': 202,
      });

      expect(published).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: server.spanId, kind: 4 });
      expect(storedContext.split('-')[2]).toBe(published.spanId);
      expect(published.attributes).toEqual({
        'herald.application_id': 42,
        'herald.event_type': 'acw_start',
        'herald.event_count': 1,
        'herald.event_id': 'evt_1',
        'herald.delivery_id': 'dlv_1',
        'herald.delivery_count': 1,
      });

      expect(delivered).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: published.spanId, kind: 3, statusCode: 2 });
      expect(delivered.traceState).toBe('vendor=opaque');
      expect(delivered.attributes).toEqual({
        'herald.application_id': 42,
        'herald.event_type': 'acw_start',
        'herald.event_id': 'evt_1',
        'herald.delivery_id': 'dlv_1',
        'herald.attempt': 2,
        'herald.destination': 'webhook',
        'http.request.method': 'POST',
        'url.full': 'https://hooks.example/in',
        'server.address': 'hooks.example',
        'server.port': 443,
        'http.response.status_code': 503,
        'error.type': '503',
      });
      // What the receiver is sent: this attempt's own span, in the publish's trace.
      expect(headers).toEqual({ traceparent: `00-${CALLER_TRACE}-${delivered.spanId}-01`, tracestate: 'vendor=opaque' });
    });

    it('starts a trace of its own for a request without a valid traceparent, and names an attempt’s error kind', async () => {
      await scenario(
        protocol,
        receiver,
        'herald-worker',
        `tracing.startRequest({ ...request({ traceparent: 'not-a-traceparent' }), method: 'PURGE' }).end(undefined, 404);
         tracing.startAttempt(null, attempt(1)).end({ status: null, excerpt: null, error: 'connection_refused', retryAfterSeconds: null, durationMs: 1 });
         tracing.startRequest(request()).end('/boom', 500);`,
      );

      const [unmatched] = named(receiver.spans, '_OTHER');
      expect(unmatched.parentSpanId).toBe('');
      expect(unmatched.traceId).not.toBe(CALLER_TRACE);
      expect(unmatched.attributes).toMatchObject({ 'http.request.method': '_OTHER', 'http.request.method_original': 'PURGE' });
      expect(unmatched.attributes['http.route']).toBeUndefined();
      expect(unmatched.statusCode).toBe(0);

      const [root] = named(receiver.spans, 'deliver acw_start');
      expect(root).toMatchObject({ service: 'herald-worker', parentSpanId: '', statusCode: 2 });
      expect(root.attributes['error.type']).toBe('connection_refused');
      expect(root.attributes['http.response.status_code']).toBeUndefined();
      expect(named(receiver.spans, 'POST /boom')[0]).toMatchObject({
        statusCode: 2,
        attributes: expect.objectContaining({ 'error.type': '500' }),
      });
    });
  });

  it('lets OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the service and add to the resource', async () => {
    const receiver = await new OtlpReceiver().listen();
    try {
      await scenario('http/json', receiver, 'herald-worker', `tracing.startAttempt(null, attempt(1)).end(answered(200));`, {
        OTEL_SERVICE_NAME: 'herald-worker-eu',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=staging,service.name=ignored',
      });
      const [span] = named(receiver.spans, 'deliver acw_start');
      expect(span.service).toBe('herald-worker-eu');
      expect(span.resource).toMatchObject({ 'deployment.environment.name': 'staging', 'service.version': expect.any(String) });
      expect(span.statusCode).toBe(0);
      expect(span.attributes['error.type']).toBeUndefined();
    } finally {
      await receiver.close();
    }
  });
});

function named(spans: ReceivedSpan[], name: string): ReceivedSpan[] {
  const found = spans.filter((span) => span.name === name);
  if (found.length !== 1)
    throw new Error(`expected one span named "${name}", got ${found.length} of: ${spans.map((s) => s.name).join(', ')}`);
  return found;
}
