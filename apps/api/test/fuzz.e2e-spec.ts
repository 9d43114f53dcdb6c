import { findErrorCode } from '@herald/contracts';
import fc from 'fast-check';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { FuzzRequest, FuzzTargets, operationsOf, requestArbitrary } from './fuzz/request-arbitraries';
import { DatabaseConnection, openDatabase } from '@herald/database/testing';
import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';

/**
 * PRODUCT.md §2 as properties, over every route of the OpenAPI document: whatever a client
 * sends, the answer is never a 5xx; every non-2xx answer is the envelope with a directory code;
 * a refused request changes nothing stored. In `pnpm test` the run is bounded and seeded (the
 * same cases every time); `pnpm fuzz` runs it long with a random seed, printed so a failure can
 * be replayed with HERALD_FUZZ_SEED.
 */
const RUNS = Number(process.env.HERALD_FUZZ_RUNS ?? 1500);
const RAW_RUNS = Math.max(50, Math.round(RUNS / 10));
const SEED = Number(process.env.HERALD_FUZZ_SEED ?? 20261123);

jest.setTimeout(Math.max(120_000, RUNS * 60));

/** An answer from an event type's schema compiler or payload validator: a place inside a schema or an example, or 400-08. */
const SCHEMA_ANSWER = /"field":"(schema|example)\/|"code":"400-08"|"message":"strict mode:/;
/** An answer from the subscription filters' checker (a place inside a filter) or their test route (PRODUCT.md §14). */
const FILTER_ANSWER = /"field":"filter[.[]|"field":"filter"|"matched_ids":/;

describe('fuzzing every route (PRODUCT.md §2)', () => {
  let t: TestApp;
  let port: number;
  let agent: http.Agent;
  let db: DatabaseConnection;
  let digestSql: string;
  let document: Record<string, any>;
  const targets: FuzzTargets = { applicationIds: [], keys: [ADMIN_KEY], deliveryIds: [], apiKeyIds: [], accountIds: [] };

  beforeAll(async () => {
    t = await createTestApp();
    const server = t.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

    for (let i = 0; i < 2; i++) {
      const tenant = await t.fixtures.tenantWithWebhook();
      await t.http.put(`/application/${tenant.applicationId}/webhook/subscription/acw_start`).set('Authorization', tenant.key).send({});
      const published = await t.http
        .post(`/application/${tenant.applicationId}/events`)
        .set('Authorization', tenant.key)
        .send({ event: 'acw_start', payload: { i } });
      targets.applicationIds.push(tenant.applicationId);
      targets.keys.push(tenant.key);
      targets.accountIds.push(tenant.accountId);
      targets.deliveryIds.push(...published.body.data.deliveries);
      targets.apiKeyIds.push((await t.fixtures.apiKey(tenant.accountId)).id);
    }
    targets.applicationIds.push(999_999);
    document = (await t.http.get('/docs-json')).body;

    db = await openDatabase(t.db.url);
    const tables = await db.query<{ name: string }>(
      `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> '_prisma_migrations' ORDER BY 1`,
    );
    digestSql = `SELECT md5(string_agg(part, '|' ORDER BY part)) AS digest FROM (${tables
      .map(({ name }) => `SELECT '${name}:' || md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) AS part FROM "${name}" t`)
      .join(' UNION ALL ')}) parts`;
    console.log(
      `fuzz: ${RUNS} requests over ${Object.keys(document.paths).length} documented paths and ${RAW_RUNS} raw ones, seed ${SEED} (replay: HERALD_FUZZ_SEED=${SEED})`,
    );
  });
  afterAll(async () => {
    agent?.destroy();
    await db?.close();
    await t?.close();
  });

  const storedState = async (): Promise<string> => (await db.query<{ digest: string }>(digestSql))[0].digest;

  function send(request: FuzzRequest): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
    return new Promise((resolve, reject) => {
      // Node's client frames no body on GET, HEAD, DELETE, OPTIONS or TRACE by itself: unframed
      // bytes would arrive as a second request, and its answer be read as the next request's.
      const body = request.method === 'HEAD' ? undefined : request.body;
      const headers = body === undefined ? request.headers : { ...request.headers, 'content-length': String(Buffer.byteLength(body)) };
      const req = http.request(
        { host: '127.0.0.1', port, method: request.method, path: request.path, headers, agent, timeout: 10_000 },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within 10 s to ${request.method} ${request.path}`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  function assertEnvelope(status: number, text: string, requestId: unknown, what: string): void {
    if (status >= 500) throw new Error(`${what} answered ${status}: ${text.slice(0, 300)}`);
    if (status < 400) return;
    const body = JSON.parse(text);
    const code = body?.error?.code;
    if (body?.success !== false || typeof body.error.message !== 'string' || !findErrorCode(code) || code.slice(0, 3) !== String(status)) {
      throw new Error(`${what} answered ${status} outside the envelope: ${text.slice(0, 300)}`);
    }
    if (requestId !== body.request_id) throw new Error(`${what}: X-Request-Id ${String(requestId)} is not the body's ${body.request_id}`);
  }

  it('never answers 5xx, always with the envelope, and a refused request changes nothing', async () => {
    const statuses = new Map<number, number>();
    const succeeded = new Set<string>();
    let schemaAnswers = 0;
    let filterAnswers = 0;
    await fc.assert(
      fc.asyncProperty(requestArbitrary(document, targets), async (request) => {
        const mutating = !['GET', 'HEAD', 'OPTIONS', 'TRACE'].includes(request.method);
        const before = mutating ? await storedState() : null;
        const res = await send(request);
        if (SCHEMA_ANSWER.test(res.text)) schemaAnswers++;
        if (FILTER_ANSWER.test(res.text)) filterAnswers++;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status < 300) succeeded.add(request.operation);
        const what = `${request.method} ${request.path.slice(0, 200)}`;
        if (request.method !== 'HEAD') assertEnvelope(res.status, res.text, res.headers['x-request-id'], what);
        else if (res.status >= 500) throw new Error(`${what} answered ${res.status}`);
        if (before !== null && res.status >= 400 && (await storedState()) !== before) {
          throw new Error(`${what} was refused with ${res.status} but changed what is stored: ${res.text.slice(0, 300)}`);
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    console.log(`fuzz: ${schemaAnswers} answers from event-type schemas, ${filterAnswers} from subscription filters`);
    console.log(`fuzz: answers by status ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
    // The run reached past validation: requests that worked, on most operations (a fuzzed DELETE
    // or revocation may leave the rest of one operation answering 404 or 403, by design).
    const operations = new Set(operationsOf(document).map((operation) => `${operation.method.toUpperCase()} ${operation.template}`));
    expect(succeeded.size).toBeGreaterThanOrEqual(Math.min(operations.size, RUNS / 100) * 0.6);
    // It reached the event-type schemas' compiler and validator (PRODUCT.md §15), not only the DTO's checks.
    expect(schemaAnswers).toBeGreaterThan(0);
    // And the subscription filters' checker and test route (PRODUCT.md §14), past the DTO's checks.
    expect(filterAnswers).toBeGreaterThan(0);
    expect((await send({ method: 'GET', path: '/healthz', headers: {}, operation: 'GET /healthz' })).status).toBe(200);
  });

  it('answers mangled raw HTTP with the envelope or not at all, never with a 5xx', async () => {
    const valid = [
      'GET /error_codes/400-01 HTTP/1.1',
      'Host: 127.0.0.1',
      `Authorization: ${ADMIN_KEY}`,
      'Content-Type: application/json',
      'Content-Length: 12',
      '',
      '{"name":"x"}',
    ].join('\r\n');
    const mangled = fc
      .array(
        fc.record({
          at: fc.nat(valid.length),
          cut: fc.nat(6),
          insert: fc.oneof(
            fc.constantFrom(
              '\r\n',
              '\r',
              '\n',
              ' ',
              ':',
              '\u0000',
              'Transfer-Encoding: chunked\r\n',
              'Content-Length: 5\r\n',
              '%',
              'HTTP/1.0',
              'CONNECT',
            ),
            fc.string({ unit: 'binary-ascii', maxLength: 8 }),
          ),
        }),
        { minLength: 1, maxLength: 3 },
      )
      .map((edits) => edits.reduce((text, { at, cut, insert }) => text.slice(0, at) + insert + text.slice(at + cut), valid));

    await fc.assert(
      fc.asyncProperty(mangled, async (bytes) => {
        const answer = await rawExchange(port, bytes);
        if (answer === '') return; // an incomplete request may be closed without an answer
        const [head, ...rest] = answer.split('\r\n\r\n');
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
        if (!status) throw new Error(`not an HTTP answer to ${JSON.stringify(bytes)}: ${JSON.stringify(answer.slice(0, 200))}`);
        const requestId = /\r\nx-request-id: ([^\r]*)/i.exec(head)?.[1];
        const body = rest.join('\r\n\r\n');
        const chunked = /\r\ntransfer-encoding: chunked/i.test(head);
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? body.length);
        // A mangled request can turn into two pipelined ones: judge the first answer.
        if (status >= 400 && !chunked && !/^HEAD /.test(bytes))
          assertEnvelope(status, body.slice(0, length), requestId, JSON.stringify(bytes));
        else if (status >= 500) throw new Error(`${JSON.stringify(bytes)} answered ${status}`);
      }),
      { numRuns: RAW_RUNS, seed: SEED, endOnFailure: true },
    );
    expect((await send({ method: 'GET', path: '/healthz', headers: {}, operation: 'GET /healthz' })).status).toBe(200);
  });
});

/**
 * Writes the bytes, half-closes, and collects whatever comes back until the server closes. A
 * server that neither answers nor closes within 5 s fails the case: it would be holding the
 * connection of a client that has finished.
 */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes, 'latin1'));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(answer));
    socket.setTimeout(5_000, () => {
      socket.destroy();
      reject(new Error(`the server neither answered nor closed within 5 s after ${JSON.stringify(bytes)}`));
    });
  });
}
