import { cloneDatabase, testServerUrl, testTemplateDatabase } from '@herald/database/testing';
import { Received, Sink } from '@herald/testing';
import { callApi, freePort, startCli, waitForOk } from './support/run-cli';
import { waitUntil } from './support/processes';

const ADMIN_KEY = 'recovery-test-admin-key-0123456789';
const EVENTS = 12;

/** The sink's headers as they came, names lowercased, in order (a Map: `headers` loses duplicates' order). */
function headersOf(request: Received): Map<string, string> {
  const headers = new Map<string, string>();
  for (let i = 0; i < request.rawHeaders.length; i += 2) headers.set(request.rawHeaders[i].toLowerCase(), request.rawHeaders[i + 1]);
  return headers;
}

/**
 * Issue 10's scenario through both processes: a receiver that is down turns every delivery into
 * a failure; once it is back, one recover sends each again exactly once, the log shows what was
 * sent each time, and a replay sends one event once more.
 */
describe('recovering from a receiver that was down (PRODUCT.md §8), api + worker + sink', () => {
  it('fails every delivery on 500s, then recover delivers each exactly once more; replay once again', async () => {
    let down = true;
    const sink = await new Sink(() => ({ status: down ? 500 : 200 })).start();
    const db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    const port = await freePort();
    const env = {
      PORT: String(port),
      HERALD_WORKER_METRICS_PORT: String(await freePort()),
      DATABASE_URL: db.url,
      HERALD_ADMIN_KEY: ADMIN_KEY,
      HERALD_LOG_LEVEL: 'warn',
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
    };
    const running = startCli(['start'], env);
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitForOk(`${base}/readyz`, 60_000, running);
      const admin = (method: string, path: string, body?: object) => callApi(base, method, path, body, ADMIN_KEY);
      const account = (await admin('POST', '/admin/accounts', { name: 'Recovery' })).body.data.id;
      await admin('POST', '/admin/applications', { id: 77, name: 'Recovery', account_id: account });
      const key = (await admin('POST', '/admin/api_keys', { account_id: account, name: 'e2e' })).body.data.key;
      const call = (method: string, path: string, body?: object) => callApi(base, method, `/application/77${path}`, body, key);
      const webhook = {
        url: sink.url(),
        retry_enabled: 1,
        retry_config: { retry_value: 1, max_retries: 1, backoff_type: 'fixed', backoff_value: 0 },
        headers: { 'X-Tenant': 'acme' },
      };
      expect((await call('PUT', '/webhook', webhook)).status).toBe(200);
      expect((await call('PUT', '/webhook/subscription/acw_start', { ensure_delivery: true })).status).toBe(200);

      const since = new Date().toISOString();
      const published: { id: string; deliveries: string[] }[] = [];
      for (let i = 0; i < EVENTS; i++) published.push((await call('POST', '/events', { event: 'acw_start', payload: { i } })).body.data);
      const deliveries = published.map((event) => event.deliveries[0]);

      // Two attempts each (max_retries 1), both refused: every delivery ends failed.
      await waitUntil(
        async () => {
          const page = await call('GET', '/deliveries?status=failed&limit=100');
          return page.body.data.length === EVENTS;
        },
        30_000,
        'every delivery to fail',
      );
      expect(sink.received).toHaveLength(EVENTS * 2);

      down = false;
      const recovered = await call('POST', '/deliveries/recover', { since });
      expect(recovered).toEqual({ status: 202, body: { success: true, data: { requeued: EVENTS } } });
      await sink.waitFor(EVENTS * 3, 30_000);
      await waitUntil(
        async () => (await call('GET', '/deliveries?status=succeeded&limit=100')).body.data.length === EVENTS,
        30_000,
        'every recovered delivery to succeed',
      );
      // Exactly once more each: no automatic follow-ups, no duplicates, even after a pause.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(sink.received).toHaveLength(EVENTS * 3);
      const afterRecover = sink.received.slice(EVENTS * 2).map((request) => headersOf(request).get('webhook-id'));
      expect([...afterRecover].sort()).toEqual(published.map((event) => event.id).sort());

      // The log shows each attempt with the headers the receiver got.
      const log = (await call('GET', `/deliveries/${deliveries[0]}`)).body.data;
      expect(log.status).toBe('succeeded');
      expect(log.attempts.map((attempt: { response_status: number }) => attempt.response_status)).toEqual([500, 500, 200]);
      const lastSent = log.attempts[2].request_headers;
      const lastReceived = headersOf(sink.received.slice(EVENTS * 2).find((r) => headersOf(r).get('webhook-id') === published[0].id)!);
      expect(Object.keys(lastSent)).toEqual([
        'content-type',
        'user-agent',
        'X-Tenant',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
      for (const [name, value] of Object.entries(lastSent)) expect(lastReceived.get(name.toLowerCase())).toBe(value);

      // A second recover finds nothing failed; a replay sends one event once more.
      expect((await call('POST', '/deliveries/recover', { since })).body.data).toEqual({ requeued: 0 });
      const replay = await call('POST', `/events/${published[3].id}/replay`);
      expect(replay.status).toBe(202);
      const [again] = (await sink.waitFor(EVENTS * 3 + 1, 15_000)).slice(EVENTS * 3);
      expect(headersOf(again).get('webhook-id')).toBe(published[3].id);
      expect(JSON.parse(again.body).data).toEqual({ i: 3 });
      const event = (await call('GET', `/events/${published[3].id}`)).body.data;
      expect(event).toMatchObject({ id: published[3].id, payload: { i: 3 }, deliveries: [deliveries[3], replay.body.data.deliveries[0]] });
    } finally {
      expect((await running.stop()).code).toBe(0);
      await sink.close();
      await db.drop();
    }
  });
});
