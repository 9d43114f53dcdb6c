import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cloneDatabase, testServerUrl, testTemplateDatabase } from '@herald/database/testing';
import { Webhook } from 'standardwebhooks';
import { Sink } from '@herald/testing';
import { callApi, freePort, runCli, startCli, waitForOk } from './support/run-cli';

const ADMIN_KEY = 'cli-test-admin-key-0123456789';

function call(base: string, method: string, path: string, body?: object, key = ADMIN_KEY): Promise<{ status: number; body: any }> {
  return callApi(base, method, path, body, key);
}
const post = (base: string, path: string, body: object) => call(base, 'POST', path, body);

/** The whole product through both processes: configure, subscribe, publish, receive, verify, read the log. */
async function deliverOneEvent(base: string, applicationId: number): Promise<void> {
  const sink = await new Sink().start();
  try {
    const account = await post(base, '/admin/accounts', { name: 'Delivery' });
    await post(base, '/admin/applications', { id: applicationId, name: 'Delivery', account_id: account.body.data.id });
    const key = (await post(base, '/admin/api_keys', { account_id: account.body.data.id, name: 'e2e' })).body.data.key;
    const app = `/application/${applicationId}`;
    const webhook = {
      url: sink.url(),
      retry_enabled: 1,
      retry_config: { retry_value: 1, max_retries: 2, backoff_type: 'fixed', backoff_value: 0 },
    };
    expect((await call(base, 'PUT', `${app}/webhook`, webhook, key)).status).toBe(200);
    expect((await call(base, 'PUT', `${app}/webhook/subscription/acw_start`, { ensure_delivery: true }, key)).status).toBe(200);
    const published = await call(base, 'POST', `${app}/events`, { event: 'acw_start', payload: { agent: 'a-1' } }, key);
    expect(published.status).toBe(202);

    const [request] = await sink.waitFor(1, 15_000);
    const secret = (await call(base, 'GET', `${app}/webhook/secret`, undefined, key)).body.data.secret;
    expect(new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).toMatchObject({
      id: published.body.data.id,
      type: 'acw_start',
      data: { agent: 'a-1' },
    });
    const deliveryPath = `${app}/deliveries/${published.body.data.deliveries[0]}`;
    for (let tries = 0; tries < 50; tries++) {
      const log = await call(base, 'GET', deliveryPath, undefined, key);
      if (log.body.data.status === 'succeeded') {
        expect(log.body.data.attempts).toEqual([expect.objectContaining({ number: 1, response_status: 200, url: sink.url() })]);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the delivery log never showed the delivery as succeeded');
  } finally {
    await sink.close();
  }
}

describe('herald start', () => {
  it('runs on the embedded database when DATABASE_URL is unset, keeping data across restarts', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'herald-start-'));
    const port = await freePort();
    const env = {
      PORT: String(port),
      HERALD_WORKER_METRICS_PORT: String(await freePort()),
      HERALD_DATA_DIR: dataDir,
      HERALD_ADMIN_KEY: ADMIN_KEY,
      HERALD_LOG_LEVEL: 'warn',
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
    };
    const base = `http://127.0.0.1:${port}`;
    try {
      const first = startCli(['start'], env);
      await waitForOk(`${base}/readyz`, 60_000, first);
      expect(first.output()).toMatch(/embedded PostgreSQL \(PGlite\)/);
      const account = await post(base, '/admin/accounts', { name: 'Persistent' });
      expect(account.status).toBe(201);
      const stopped = await first.stop();
      expect(stopped.code).toBe(0);
      expect(stopped.ms).toBeLessThan(30_000);

      const second = startCli(['start'], env);
      await waitForOk(`${base}/readyz`, 60_000, second);
      expect(second.output()).toMatch(/schema is up to date/);
      const application = await post(base, '/admin/applications', { id: 7, name: 'Kept', account_id: account.body.data.id });
      expect(application.status).toBe(201);
      // On PGlite the worker polls (NOTIFY does not cross its connections).
      await deliverOneEvent(base, 8);
      expect((await second.stop()).code).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('uses the PostgreSQL server in DATABASE_URL, and the admin commands reach it', async () => {
    const db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    const port = await freePort();
    const workerMetricsPort = await freePort();
    const env = {
      PORT: String(port),
      HERALD_WORKER_METRICS_PORT: String(workerMetricsPort),
      DATABASE_URL: db.url,
      HERALD_ADMIN_KEY: ADMIN_KEY,
      HERALD_LOG_LEVEL: 'warn',
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
    };
    const running = startCli(['start'], env);
    try {
      await waitForOk(`http://127.0.0.1:${port}/readyz`, 60_000, running);
      expect(running.output()).toMatch(/PostgreSQL server in DATABASE_URL/);
      const created = await runCli(['accounts', 'create', '--name', 'From the cli', '--json'], env);
      expect(created.code).toBe(0);
      expect(JSON.parse(created.stdout)).toEqual({ id: expect.stringMatching(/^acc_/), name: 'From the cli' });
      const refused = await runCli(['applications', 'create', '--name', 'x', '--account', 'acc_00000000000000000000000000'], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/^herald: 404-06 /);
      const accountId = JSON.parse(created.stdout).id;
      expect((await runCli(['applications', 'create', '--name', 'Listed', '--account', accountId, '--id', '31'], env)).code).toBe(0);
      expect((await runCli(['api-keys', 'create', '--name', 'listed', '--account', accountId], env)).code).toBe(0);
      const accounts = await runCli(['accounts', 'list', '--limit', '1', '--json'], env);
      expect(JSON.parse(accounts.stdout)).toEqual({ data: [{ id: accountId, name: 'From the cli' }], next_cursor: null });
      const applications = await runCli(['applications', 'list', '--account', accountId, '--json'], env);
      expect(JSON.parse(applications.stdout).data).toEqual([{ id: 31, name: 'Listed', account_id: accountId }]);
      const keys = JSON.parse((await runCli(['api-keys', 'list', '--account', accountId, '--json'], env)).stdout);
      expect(keys.data).toEqual([expect.objectContaining({ name: 'listed', scope: 'account', account_id: accountId, revoked_at: null })]);
      expect(keys.data[0]).not.toHaveProperty('key');
      const badCursor = await runCli(['accounts', 'list', '--cursor', 'nope'], env);
      expect(badCursor.code).toBe(1);
      expect(badCursor.stderr).toMatch(/^herald: 400-03 /);
      await deliverOneEvent(`http://127.0.0.1:${port}`, 9);

      // Both processes report to Prometheus: the api the queue (now empty), the worker its work.
      const apiMetrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(apiMetrics).toMatch(/^herald_deliveries_queued\{state="due"\} 0$/m);
      const workerMetrics = await (await fetch(`http://127.0.0.1:${workerMetricsPort}/metrics`)).text();
      expect(workerMetrics).toMatch(/^herald_delivery_outcomes_total\{outcome="succeeded"\} 1$/m);
    } finally {
      expect((await running.stop()).code).toBe(0);
      await db.drop();
    }
  });

  it('stops before starting anything when a variable is invalid, naming it', async () => {
    const result = await runCli(['start'], { PORT: 'eighty', HERALD_LOG_LEVEL: 'chatty' }, 15_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/PORT: must be an integer/);
    expect(result.stderr).toMatch(/HERALD_LOG_LEVEL: must be one of/);
  });

  it('prints its usage for no command and refuses unknown ones', async () => {
    const bare = await runCli([], {});
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/^Usage: herald \[options\] \[command\]/);
    const unknown = await runCli(['frobnicate'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe("herald: unknown command 'frobnicate' (see herald --help)\n");
  });
});
