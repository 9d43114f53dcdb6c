import { cloneDatabase, TestDatabase, testServerUrl, testTemplateDatabase } from '@herald/database/testing';
import { Received, Sink } from '@herald/testing';
import { callApi, freePort, Running, startCli, waitForOk } from './support/run-cli';
import { childPid, holdPort, Poll, pollContinuously, runningChildren, waitUntil } from './support/processes';

// `herald start` keeps the api and the worker running (PRODUCT.md §7): these kill one of them
// with SIGKILL, as the OOM killer would, and watch the other keep serving while it comes back.
// Each test also holds the dead process's port for a moment, so the first restart fails at
// start-up: that makes "while it was dead" a window the test controls rather than a race, and
// shows the backoff growing.

const ADMIN_KEY = 'cli-supervision-admin-key-0123';

interface Herald {
  running: Running;
  base: string;
  apiPort: number;
  metricsPort: number;
}

async function startHerald(db: TestDatabase): Promise<Herald> {
  const apiPort = await freePort();
  const metricsPort = await freePort();
  const running = startCli(['start'], {
    PORT: String(apiPort),
    HERALD_WORKER_METRICS_PORT: String(metricsPort),
    DATABASE_URL: db.url,
    HERALD_ADMIN_KEY: ADMIN_KEY,
    HERALD_LOG_LEVEL: 'warn',
    HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
    // A delivery whose worker was killed mid-attempt is claimed again when its lease runs out.
    HERALD_DELIVERY_TIMEOUT_SECONDS: '5',
    HERALD_DELIVERY_LEASE_SECONDS: '6',
  });
  const base = `http://127.0.0.1:${apiPort}`;
  await waitForOk(`${base}/readyz`, 60_000, running);
  await waitForOk(`http://127.0.0.1:${metricsPort}/metrics`, 60_000, running);
  return { running, base, apiPort, metricsPort };
}

function call(base: string, method: string, path: string, body?: object, key = ADMIN_KEY): Promise<{ status: number; body: any }> {
  return callApi(base, method, path, body, key);
}

/** An account, application `id` with a webhook to the sink, subscribed to acw_start; returns its key. */
async function configure(base: string, id: number, sink: Sink, retryValueSeconds: number): Promise<string> {
  const account = await call(base, 'POST', '/admin/accounts', { name: `Supervised ${id}` });
  expect(account.status).toBe(201);
  expect((await call(base, 'POST', '/admin/applications', { id, name: 'Supervised', account_id: account.body.data.id })).status).toBe(201);
  const key = (await call(base, 'POST', '/admin/api_keys', { account_id: account.body.data.id, name: 'e2e' })).body.data.key;
  const webhook = {
    url: sink.url(),
    retry_enabled: 1,
    retry_config: { retry_value: retryValueSeconds, max_retries: 5, backoff_type: 'fixed', backoff_value: 0 },
  };
  expect((await call(base, 'PUT', `/application/${id}/webhook`, webhook, key)).status).toBe(200);
  expect((await call(base, 'PUT', `/application/${id}/webhook/subscription/acw_start`, { ensure_delivery: true }, key)).status).toBe(200);
  return key;
}

async function publish(base: string, id: number, key: string, step: string): Promise<{ event: string; delivery: string }> {
  const published = await call(base, 'POST', `/application/${id}/events`, { event: 'acw_start', payload: { step } }, key);
  expect(published.status).toBe(202);
  return { event: published.body.data.id, delivery: published.body.data.deliveries[0] };
}

const requestsFor = (sink: Sink, step: string): Received[] => sink.received.filter((r) => JSON.parse(r.body).data.step === step);

/** Waits until the delivery log shows the delivery succeeded, and returns it. */
function succeeded(base: string, id: number, key: string, delivery: string): Promise<any> {
  return waitUntil(
    async () => {
      const log = await call(base, 'GET', `/application/${id}/deliveries/${delivery}`, undefined, key);
      return log.body.data?.status === 'succeeded' ? log.body.data : null;
    },
    30_000,
    `delivery ${delivery} to succeed`,
  );
}

function expectAllOk(polls: Poll[]): void {
  expect(polls.length).toBeGreaterThan(20);
  expect(polls.filter((poll) => poll.status !== 200)).toEqual([]);
}

describe('herald start supervises the api and the worker', () => {
  let db: TestDatabase;
  let sink: Sink;
  let herald: Herald | null = null;

  beforeEach(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    sink = await new Sink().start();
  });

  afterEach(async () => {
    if (herald) expect((await herald.running.stop()).code).toBe(0);
    herald = null;
    await sink.close();
    await db.drop();
  });

  it('restarts a killed worker while the api keeps answering, and loses no accepted event', async () => {
    herald = await startHerald(db);
    const { running, base, metricsPort } = herald;
    const output = () => running.output();
    const cliPid = running.child.pid as number;
    const key = await configure(base, 11, sink, 1);

    // The pipeline works before anything is killed.
    await publish(base, 11, key, 'before');
    await sink.waitFor(1, 30_000);

    // An attempt in flight when the worker dies: the receiver holds the first request open.
    let inFlightSeen = 0;
    sink.respond((_, request) =>
      JSON.parse(request.body).data.step === 'in-flight' && ++inFlightSeen === 1 ? { status: 200, hang: true } : { status: 200 },
    );
    const inFlight = await publish(base, 11, key, 'in-flight');
    await waitUntil(() => requestsFor(sink, 'in-flight').length === 1, 30_000, 'the in-flight attempt to reach the sink');

    const health = pollContinuously(`${base}/healthz`);
    let polls: Poll[];
    try {
      const { apiPid, workerPid } = runningChildren(cliPid);
      process.kill(workerPid, 'SIGKILL');
      const release = await holdPort(metricsPort);
      let whileDead: { event: string; delivery: string };
      try {
        await waitUntil(
          () =>
            new RegExp(
              `worker \\(pid ${workerPid}\\) was killed by SIGKILL after [\\d.]+ s up; restarting it in 0\\.5 s \\(restart 1\\)`,
            ).test(output()),
          30_000,
          'the supervisor to report the dead worker',
        );
        // Accepted while no worker runs at all: stored, so delivered once one is back.
        whileDead = await publish(base, 11, key, 'while-dead');
        // The restarted worker cannot take its metrics port, so it fails at start-up and waits longer.
        await waitUntil(
          () => /worker \(pid \d+\) exited with code 1 after [\d.]+ s up; restarting it in 1 s \(restart 2\)/.test(output()),
          60_000,
          'the first restart to fail on the held port',
        );
        expect(requestsFor(sink, 'while-dead')).toEqual([]);
      } finally {
        await release();
      }

      await waitForOk(`http://127.0.0.1:${metricsPort}/metrics`, 60_000, running);
      const restartedPid = childPid(cliPid, 'worker');
      expect(restartedPid).not.toBeNull();
      expect(restartedPid).not.toBe(workerPid);

      // Both events the dead worker left behind arrive: the one it was sending (again, once its
      // lease ran out: receivers deduplicate on webhook-id) and the one published while it was down.
      const [delivered, redelivered] = await Promise.all([
        succeeded(base, 11, key, whileDead.delivery),
        succeeded(base, 11, key, inFlight.delivery),
      ]);
      expect(delivered.attempts).toEqual([expect.objectContaining({ number: 1, response_status: 200 })]);
      expect(redelivered.attempts.at(-1)).toEqual(expect.objectContaining({ response_status: 200 }));
      expect(requestsFor(sink, 'while-dead').map((r) => r.headers['webhook-id'])).toEqual([whileDead.event]);
      expect(new Set(requestsFor(sink, 'in-flight').map((r) => r.headers['webhook-id']))).toEqual(new Set([inFlight.event]));
      expect(requestsFor(sink, 'in-flight')).toHaveLength(2);

      // The api was never restarted.
      expect(childPid(cliPid, 'api')).toBe(apiPid);
      expect(output()).not.toMatch(/herald: api \(pid/);
    } finally {
      polls = await health.stop();
    }
    expectAllOk(polls);
  });

  it('restarts a killed api while the worker keeps working, with the data still there', async () => {
    herald = await startHerald(db);
    const { running, base, apiPort, metricsPort } = herald;
    const output = () => running.output();
    const cliPid = running.child.pid as number;
    const key = await configure(base, 12, sink, 2);

    // The first attempt fails; its retry falls due (2 s later) while the api is dead.
    sink.respond((n) => ({ status: n === 1 ? 500 : 200 }));
    const published = await publish(base, 12, key, 'retried');
    await sink.waitFor(1, 30_000);

    const metrics = pollContinuously(`http://127.0.0.1:${metricsPort}/metrics`);
    let polls: Poll[];
    try {
      const { apiPid, workerPid } = runningChildren(cliPid);
      const killedAt = Date.now();
      process.kill(apiPid, 'SIGKILL');
      const release = await holdPort(apiPort);
      try {
        await waitUntil(
          () =>
            new RegExp(`api \\(pid ${apiPid}\\) was killed by SIGKILL after [\\d.]+ s up; restarting it in 0\\.5 s \\(restart 1\\)`).test(
              output(),
            ),
          30_000,
          'the supervisor to report the dead api',
        );
        // With no api anywhere (the test holds its port), the worker still sends the retry.
        const [, retry] = await sink.waitFor(2, 30_000);
        expect(retry.at).toBeGreaterThan(killedAt);
        await waitUntil(
          () => /api \(pid \d+\) exited with code 1 after [\d.]+ s up; restarting it in 1 s \(restart 2\)/.test(output()),
          60_000,
          'the first restart to fail on the held port',
        );
      } finally {
        await release();
      }
      await waitForOk(`${base}/readyz`, 60_000, running);
      expect(childPid(cliPid, 'api')).not.toBe(apiPid);
      // The worker was never restarted.
      expect(childPid(cliPid, 'worker')).toBe(workerPid);
      expect(output()).not.toMatch(/herald: worker \(pid/);
    } finally {
      polls = await metrics.stop();
    }
    expectAllOk(polls);

    // What was stored before the kill, and what the worker recorded while the api was dead, is there.
    const webhook = await call(base, 'GET', '/application/12/webhook', undefined, key);
    expect(webhook.status).toBe(200);
    expect(webhook.body.data).toMatchObject({ url: sink.url(), retry_enabled: 1 });
    const delivery = await succeeded(base, 12, key, published.delivery);
    expect(delivery.attempts).toEqual([
      expect.objectContaining({ number: 1, response_status: 500 }),
      expect.objectContaining({ number: 2, response_status: 200 }),
    ]);
  });

  it('stops with exit code 1 and one line when a process keeps failing at start-up', async () => {
    const apiPort = await freePort();
    const metricsPort = await freePort();
    // The worker's metrics port is taken for the whole run: every start of the worker fails.
    const release = await holdPort(metricsPort);
    try {
      const running = startCli(['start'], {
        PORT: String(apiPort),
        HERALD_WORKER_METRICS_PORT: String(metricsPort),
        DATABASE_URL: db.url,
        HERALD_LOG_LEVEL: 'warn',
      });
      const exited = new Promise<number | null>((resolve) => running.child.once('exit', (code) => resolve(code)));
      const cliPid = running.child.pid as number;
      // The api serves meanwhile.
      await waitForOk(`http://127.0.0.1:${apiPort}/healthz`, 60_000, running);
      const apiPid = childPid(cliPid, 'api');
      expect(apiPid).not.toBeNull();
      expect(await exited).toBe(1);
      const lines = running
        .output()
        .split('\n')
        .filter((line) => line.startsWith('herald: worker'));
      expect(lines).toEqual([
        expect.stringMatching(/^herald: worker \(pid \d+\) exited with code 1 after [\d.]+ s up; restarting it in 0\.5 s \(restart 1\)$/),
        expect.stringMatching(/restarting it in 1 s \(restart 2\)$/),
        expect.stringMatching(/restarting it in 2 s \(restart 3\)$/),
        expect.stringMatching(/restarting it in 4 s \(restart 4\)$/),
        expect.stringMatching(
          /^herald: worker stopped 5 times within 60 s \(last: worker \(pid \d+\) exited with code 1\); stopping Herald$/,
        ),
      ]);
      expect(running.output()).toMatch(/HERALD_WORKER_METRICS_PORT: 127\.0\.0\.1:\d+ is already in use/);
      // The api was stopped with it, not left behind.
      expect(() => process.kill(apiPid as number, 0)).toThrow();
    } finally {
      await release();
    }
  });
});
