import { DELIVERY_CHANNEL } from '@herald/database/queue';
import { Sink } from '@herald/testing';
import { TestWorker } from './support/test-worker';
import { workerProcess } from './support/worker-process';

describe('worker processes: crash safety and exactly-once claiming (PRODUCT.md §5.2)', () => {
  let fixtures: TestWorker;
  let sink: Sink;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    fixtures = await TestWorker.start({}, { runWorker: false });
    env = { DATABASE_URL: fixtures.db.url, HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8' };
  });
  afterAll(() => fixtures.close());
  beforeEach(async () => {
    sink = await new Sink().start();
  });
  afterEach(() => sink.close());

  it('delivers events accepted while no worker ran, once one starts', async () => {
    const app = await fixtures.application({ url: sink.url() });
    const ids = [(await fixtures.publish(app))!, (await fixtures.publish(app))!];
    for (const id of ids) expect((await fixtures.delivery(app, id)).status).toBe('pending');
    expect(sink.received).toHaveLength(0);
    // Every wait below is on something the worker does, never on a length of time: a loaded
    // machine makes each step slower, not wrong.
    const worker = workerProcess({ ...env, HERALD_LOG_LEVEL: 'info' });
    try {
      // Logged as it installs its SIGTERM handler: from here on, a SIGTERM is a shutdown.
      await worker.printed('"worker started"');
      await sink.waitFor(ids.length, 45_000);
      for (const id of ids) expect((await fixtures.settled(app, id)).status).toBe('succeeded');
      // Fully started means its LISTEN connection is up too: stopping a worker while that
      // connection is still being made left it connected, and the worker never exited.
      await listening(fixtures);
    } finally {
      worker.child.kill('SIGTERM');
      expect((await worker.exit).code).toBe(0);
    }
  });

  it('two workers on one database never send the same attempt twice', async () => {
    sink.respond(() => ({ status: 200, delayMs: 5 }));
    const apps = await Promise.all([1, 2, 3, 4].map(() => fixtures.application({ url: sink.url() })));
    const ids: [(typeof apps)[number], string][] = [];
    for (let i = 0; i < 200; i++) {
      const app = apps[i % apps.length];
      ids.push([app, (await fixtures.publish(app, 'acw_start', { i }))!]);
    }
    const workers = [workerProcess(env), workerProcess(env)];
    try {
      await sink.waitFor(200, 30_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const webhookIds = sink.received.map((r) => r.headers['webhook-id']);
      expect(webhookIds).toHaveLength(200);
      expect(new Set(webhookIds).size).toBe(200);
      for (const [app, id] of ids) {
        const delivery = await fixtures.delivery(app, id);
        expect(delivery.status).toBe('succeeded');
        expect(delivery.attempts).toHaveLength(1);
      }
    } finally {
      for (const worker of workers) worker.child.kill('SIGTERM');
      for (const worker of workers) expect((await worker.exit).code).toBe(0);
    }
  });

  it('loses nothing when a worker is killed mid-attempt: its lease expires and another worker delivers', async () => {
    sink.respond((n) => (n === 1 ? { status: 200, hang: true } : { status: 200 }));
    const app = await fixtures.application({ url: sink.url() });
    const id = (await fixtures.publish(app))!;
    const leased = { ...env, HERALD_DELIVERY_TIMEOUT_SECONDS: '2', HERALD_DELIVERY_LEASE_SECONDS: '3' };
    const doomed = workerProcess(leased);
    await sink.waitFor(1, 15_000);
    doomed.child.kill('SIGKILL');
    expect((await doomed.exit).signal).toBe('SIGKILL');
    expect((await fixtures.delivery(app, id)).status).toBe('sending');

    const successor = workerProcess(leased);
    try {
      const delivery = await fixtures.settled(app, id, ['succeeded', 'failed'], 20_000);
      expect(delivery.status).toBe('succeeded');
      expect(sink.received).toHaveLength(2);
      expect(sink.received[1].headers['webhook-id']).toBe(sink.received[0].headers['webhook-id']);
      // The attempt that died with its worker left no result; the log holds the one that finished.
      expect(delivery.attempts.map((a) => a.responseStatus)).toEqual([200]);
    } finally {
      successor.child.kill('SIGTERM');
      await successor.exit;
    }
  });

  it('on SIGTERM stops claiming, lets the attempt in flight finish and record, and exits 0', async () => {
    sink.respond(() => ({ status: 200, delayMs: 2_000 }));
    const app = await fixtures.application({ url: sink.url() });
    const inFlight = (await fixtures.publish(app))!;
    const dueDuringShutdown = (await fixtures.publish(app))!;
    await fixtures.sql("UPDATE delivery_queue SET due_at = now() + interval '1 hour' WHERE delivery_id = $1", [dueDuringShutdown]);
    const worker = workerProcess(env);
    await sink.waitFor(1, 15_000);
    // Now due half a second into the shutdown (an UPDATE sends no NOTIFY): a worker still claiming would take it.
    await fixtures.sql("UPDATE delivery_queue SET due_at = now() + interval '500 milliseconds' WHERE delivery_id = $1", [
      dueDuringShutdown,
    ]);
    const asked = Date.now();
    worker.child.kill('SIGTERM');
    expect((await worker.exit).code).toBe(0);
    expect(Date.now() - asked).toBeGreaterThan(1_000);
    expect(Date.now() - asked).toBeLessThan(30_000);

    const finished = await fixtures.delivery(app, inFlight);
    expect(finished.status).toBe('succeeded');
    expect(finished.attempts.map((a) => a.responseStatus)).toEqual([200]);
    expect((await fixtures.delivery(app, dueDuringShutdown)).status).toBe('pending');
    expect(sink.received).toHaveLength(1);
  });
});

/** Waits until a connection to the test database is LISTENing for deliveries (the worker's). */
async function listening(fixtures: TestWorker): Promise<void> {
  const listen = `LISTEN ${DELIVERY_CHANNEL}`;
  while ((await fixtures.sql('SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND query = $1', [listen])).length === 0) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
