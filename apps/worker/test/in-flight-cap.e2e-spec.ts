import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { WebhookThrottleRepository } from '@herald/database';
import { testAudit } from '@herald/database/testing';
import { TestWorker } from './support/test-worker';
import { workerProcess } from './support/worker-process';

/** HERALD_ENDPOINT_MAX_IN_FLIGHT for the worker processes: far below each one's host cap (16). */
const ENDPOINT_CAP = 4;
/** A webhook's own max_in_flight, below the default. */
const OWN_CAP = 2;
const EVENTS = 60;
/** Each answer takes this long, so attempts overlap and the cap is what limits them. */
const ANSWER_MS = 150;

/**
 * A receiver that answers after ANSWER_MS and keeps, per path, how many requests it is holding
 * at once and the most it ever held. A request whose connection closes (a killed worker's) stops
 * counting then.
 */
class ConcurrencyReceiver {
  private readonly server: Server;
  readonly current = new Map<string, number>();
  readonly most = new Map<string, number>();
  readonly received = new Map<string, Set<number>>();

  constructor() {
    this.server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const path = req.url ?? '/';
      const now = (this.current.get(path) ?? 0) + 1;
      this.current.set(path, now);
      this.most.set(path, Math.max(this.most.get(path) ?? 0, now));
      let body = '';
      let counted = true;
      const done = () => {
        if (!counted) return;
        counted = false;
        this.current.set(path, (this.current.get(path) ?? 1) - 1);
      };
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        setTimeout(() => {
          const received = this.received.get(path) ?? new Set<number>();
          received.add((JSON.parse(body) as { data: { n: number } }).data.n);
          this.received.set(path, received);
          done();
          res.end('ok');
        }, ANSWER_MS);
      });
      res.on('close', done);
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  count(path: string): number {
    return this.received.get(path)?.size ?? 0;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * PRODUCT.md §17: attempts in flight per endpoint are capped across every worker process, by
 * the database (the claim counts the leases recorded in endpoint_claims). Two real worker
 * processes, each allowed 16 attempts per host, share one endpoint capped at 4 and another capped
 * at 2 by its webhook; one worker is killed mid-run, and its slots come back with its leases.
 */
describe('attempts in flight per endpoint, across worker processes', () => {
  let worker: TestWorker;
  let receiver: ConcurrencyReceiver;
  const processes: ReturnType<typeof workerProcess>[] = [];

  beforeAll(async () => {
    worker = await TestWorker.start({}, { runWorker: false });
    receiver = await new ConcurrencyReceiver().start();
  });
  afterAll(async () => {
    for (const { child, exit } of processes) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exit;
    }
    await receiver.close();
    await worker.close();
  });

  async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it(`holds ${ENDPOINT_CAP} (and a webhook's own ${OWN_CAP}) across two workers, and a killed worker's slots come back with its leases`, async () => {
    const shared = await worker.application({ url: receiver.url('/default-cap') });
    const own = await worker.application({ url: receiver.url('/own-cap') });
    await worker.app.get(WebhookThrottleRepository).set(own, { perSecond: null, maxInFlight: OWN_CAP }, new Date(), testAudit);
    for (let n = 0; n < EVENTS; n++) {
      await worker.publish(shared, 'acw_start', { n });
      await worker.publish(own, 'acw_start', { n });
    }

    const env = {
      DATABASE_URL: worker.db.url,
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
      HERALD_DB_POOL_SIZE: '4',
      HERALD_WORKER_HOST_CONCURRENCY: '16',
      HERALD_ENDPOINT_MAX_IN_FLIGHT: String(ENDPOINT_CAP),
      // Short, so the killed worker's leases run out within the test.
      HERALD_DELIVERY_TIMEOUT_SECONDS: '2',
      HERALD_DELIVERY_LEASE_SECONDS: '3',
      HERALD_LOG_LEVEL: 'info',
    };
    const first = workerProcess(env);
    const second = workerProcess(env);
    processes.push(first, second);
    await Promise.all([first.printed('worker started'), second.printed('worker started')]);

    // Killed mid-run, with attempts in flight to both endpoints.
    await until(() => receiver.count('/default-cap') >= EVENTS / 4, 30_000, 'a quarter of the deliveries');
    first.child.kill('SIGKILL');
    await first.exit;

    await until(() => receiver.count('/default-cap') === EVENTS && receiver.count('/own-cap') === EVENTS, 60_000, 'every delivery');
    // The caps bound the receiver's view, and were reached (so they, not the load, were the limit).
    expect(receiver.most.get('/default-cap')).toBe(ENDPOINT_CAP);
    expect(receiver.most.get('/own-cap')).toBe(OWN_CAP);

    // The receiver notes a request before its answer reaches the worker, whose finish records it
    // a moment later: wait for the last ones to be recorded.
    const statuses = async () =>
      (
        await worker.sql<{ status: string; count: string }>(
          'SELECT status, count(*) AS count FROM deliveries WHERE application_id = ANY($1) GROUP BY status ORDER BY status',
          [[shared.applicationId, own.applicationId]],
        )
      ).map((row) => [row.status, Number(row.count)]);
    let recorded = await statuses();
    for (let tries = 0; tries < 100 && JSON.stringify(recorded) !== JSON.stringify([['succeeded', EVENTS * 2]]); tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      recorded = await statuses();
    }
    expect(recorded).toEqual([['succeeded', EVENTS * 2]]);
    // Every claim record with nothing left in flight is cleaned away as claims go on.
    const [{ leftover }] = await worker.sql<{ leftover: string }>(
      `SELECT count(*) AS leftover FROM endpoint_claims c
        WHERE EXISTS (SELECT 1 FROM delivery_queue q WHERE q.delivery_id = ANY (c.delivery_ids) AND q.lease_token = c.lease_token)`,
    );
    expect(Number(leftover)).toBe(0);
  }, 120_000);

  it(`holds ${ENDPOINT_CAP} across two workers that each hold deliveries waiting behind their slots`, async () => {
    // The default lease (60 s) and a 5 s deadline: each worker may hold three deliveries per slot
    // of a fast endpoint (answers in ANSWER_MS), so either could send more than the cap at once
    // if the slots were not shared out by the database.
    const held = await worker.application({ url: receiver.url('/held') });
    for (let n = 0; n < EVENTS; n++) await worker.publish(held, 'acw_start', { n });
    const env = {
      DATABASE_URL: worker.db.url,
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
      HERALD_DB_POOL_SIZE: '4',
      HERALD_ENDPOINT_MAX_IN_FLIGHT: String(ENDPOINT_CAP),
      HERALD_DELIVERY_TIMEOUT_SECONDS: '5',
      HERALD_LOG_LEVEL: 'info',
    };
    const both = [workerProcess(env), workerProcess(env)];
    processes.push(...both);
    await Promise.all(both.map((p) => p.printed('worker started')));

    await until(() => receiver.count('/held') === EVENTS, 60_000, 'every delivery');
    expect(receiver.most.get('/held')).toBe(ENDPOINT_CAP);
    const [{ sent }] = await worker.sql<{ sent: string }>(
      `SELECT count(*) AS sent FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id WHERE d.application_id = $1`,
      [held.applicationId],
    );
    // Each delivery attempted once (the receiver saw each number once, too).
    expect(Number(sent)).toBeLessThanOrEqual(EVENTS);
  }, 120_000);
});
