import { Received, Sink } from '@herald/testing';
import { ApplicationScope } from '@herald/database';
import { TestWorker } from './support/test-worker';
import { workerProcess } from './support/worker-process';

/** Each key's receipts, in arrival order: [sequence number in the key, arrival time]. */
function receiptsByKey(received: readonly Received[]): Map<string, { seq: number; at: number }[]> {
  const byKey = new Map<string, { seq: number; at: number }[]>();
  for (const request of received) {
    const body = JSON.parse(request.body) as { ordering_key?: string; data: { seq: number } };
    if (body.ordering_key === undefined) continue;
    const list = byKey.get(body.ordering_key) ?? [];
    list.push({ seq: body.data.seq, at: request.at });
    byKey.set(body.ordering_key, list);
  }
  return byKey;
}

/**
 * The promise of PRODUCT.md §13, checked receipt by receipt: within a key, every attempt of an
 * event arrives after every attempt of the event before it (a retried head holds its key; a
 * killed worker's attempt is sent again, still before the next), and each event is attempted.
 */
function expectKeyOrder(received: readonly Received[], keys: number, perKey: number, replyMs: number): void {
  const byKey = receiptsByKey(received);
  expect(byKey.size).toBe(keys);
  for (const [key, receipts] of byKey) {
    const seqs = receipts.map((r) => r.seq);
    expect({ key, seqs }).toEqual({ key, seqs: [...seqs].sort((a, b) => a - b) });
    expect(new Set(seqs).size).toBe(perKey);
    // The next event's first attempt starts only once the last attempt of the one before has
    // been answered (the receiver takes `replyMs` to answer a success) and recorded.
    for (let seq = 1; seq < perKey; seq++) {
      const previousLast = Math.max(...receipts.filter((r) => r.seq === seq - 1).map((r) => r.at));
      const nextFirst = Math.min(...receipts.filter((r) => r.seq === seq).map((r) => r.at));
      expect({ key, seq, gapMs: nextFirst - previousLast >= replyMs }).toEqual({ key, seq, gapMs: true });
    }
  }
}

describe('ordered delivery per key (PRODUCT.md §13)', () => {
  let fixtures: TestWorker;
  let sink: Sink;

  beforeAll(async () => {
    fixtures = await TestWorker.start({}, { runWorker: false });
  });
  afterAll(() => fixtures.close());
  beforeEach(async () => {
    sink = await new Sink().start();
  });
  afterEach(() => sink.close());

  /** `perKey` events for each of `keys` keys, interleaved (k0#0, k1#0, …, k0#1, …), and `unkeyed` without a key. */
  async function publishInterleaved(app: ApplicationScope, keys: number, perKey: number, unkeyed: number): Promise<void> {
    for (let seq = 0; seq < perKey; seq++) {
      for (let k = 0; k < keys; k++) await fixtures.publish(app, 'acw_start', { seq, key: k }, false, `call-${k}`);
    }
    for (let i = 0; i < unkeyed; i++) await fixtures.publish(app, 'acw_start', { seq: i, unkeyed: true });
  }

  async function allSucceeded(app: ApplicationScope, count: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [{ done }] = await fixtures.sql<{ done: string }>(
        `SELECT count(*) AS done FROM deliveries WHERE application_id = $1 AND status = 'succeeded'`,
        [app.applicationId],
      );
      if (Number(done) === count) return;
      if (Date.now() > deadline) throw new Error(`${done} of ${count} delivered after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  it('holds each key behind a retrying head while other keys and unkeyed events flow, checked receipt by receipt', async () => {
    // Every third event of a key fails its first two attempts; the rest succeed.
    const failuresLeft = new Map<string, number>();
    sink.respond((_, request) => {
      const body = JSON.parse(request.body) as { ordering_key?: string; data: { seq: number } };
      const id = `${body.ordering_key}#${body.data.seq}`;
      if (body.ordering_key === undefined || body.data.seq % 3 !== 1) return { status: 200, delayMs: 5 };
      const left = failuresLeft.get(id) ?? 2;
      failuresLeft.set(id, left - 1);
      return left > 0 ? { status: 503 } : { status: 200, delayMs: 5 };
    });
    const app = await fixtures.application({ url: sink.url(), policy: { maxRetries: 5 } });
    await publishInterleaved(app, 4, 6, 5);
    await fixtures.startWorker();
    try {
      await allSucceeded(app, 4 * 6 + 5, 30_000);
    } finally {
      await fixtures.stopWorker();
    }
    expectKeyOrder(sink.received, 4, 6, 5);
    // The retried heads were attempted three times each, and their keys waited for them.
    const receipts = receiptsByKey(sink.received).get('call-0')!;
    expect(receipts.filter((r) => r.seq === 1)).toHaveLength(3);
    // Unkeyed events were not held back by a retrying key: all of them arrived before the last
    // retry of the first retried head.
    const lastRetry = Math.max(...receipts.filter((r) => r.seq === 1).map((r) => r.at));
    const unkeyed = sink.received.filter((r) => JSON.parse(r.body).ordering_key === undefined);
    expect(unkeyed).toHaveLength(5);
    expect(Math.max(...unkeyed.map((r) => r.at))).toBeLessThan(lastRetry);
    expect(JSON.parse(sink.received[0].body)).toHaveProperty('ordering_key');
  });

  it('keeps the order across two worker processes, and when one is killed mid-key', async () => {
    sink.respond(() => ({ status: 200, delayMs: 60 }));
    const app = await fixtures.application({ url: sink.url() });
    await publishInterleaved(app, 6, 8, 0);
    const env = {
      DATABASE_URL: fixtures.db.url,
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
      HERALD_DELIVERY_TIMEOUT_SECONDS: '2',
      HERALD_DELIVERY_LEASE_SECONDS: '3',
    };
    const workers = [workerProcess(env), workerProcess(env)];
    try {
      await sink.waitFor(12, 20_000);
      workers[1].child.kill('SIGKILL');
      expect((await workers[1].exit).signal).toBe('SIGKILL');
      await allSucceeded(app, 6 * 8, 40_000);
    } finally {
      workers[0].child.kill('SIGTERM');
      await workers[0].exit;
    }
    expectKeyOrder(sink.received, 6, 8, 60);
  });
});
