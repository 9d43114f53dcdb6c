import { freePort, Sink } from '@herald/testing';
import { TestWorker } from './support/test-worker';

/** The value of one sample line, e.g. `herald_delivery_outcomes_total{outcome="succeeded"}`; 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe("the worker's Prometheus endpoint (PRODUCT.md §7)", () => {
  let worker: TestWorker;
  let sink: Sink;
  let metricsUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    worker = await TestWorker.start({ HERALD_WORKER_METRICS_PORT: String(port) });
    sink = await new Sink((_, request) => ({ status: request.path === '/ok' ? 200 : 503 })).start();
  });
  afterAll(async () => {
    await sink.close();
    await worker.close();
  });

  it('counts attempts by response class and deliveries by outcome, as they happen', async () => {
    const before = await (await fetch(metricsUrl)).text();
    for (const outcome of ['succeeded', 'failed', 'retry_scheduled', 'cancelled', 'paused', 'released', 'lease_lost']) {
      expect(before).toContain(`herald_delivery_outcomes_total{outcome="${outcome}"} 0`);
    }
    const ok = await worker.application({ url: sink.url('/ok') });
    const failing = await worker.application({ url: sink.url('/fail') });
    const delivered = await worker.publish(ok);
    const refused = await worker.publish(failing);
    expect((await worker.settled(ok, delivered!)).status).toBe('succeeded');
    const failed = await worker.settled(failing, refused!);
    expect(failed.status).toBe('failed');

    // The outcome is counted just after the attempt is recorded; give it a moment.
    let text = '';
    for (let tries = 0; tries < 50; tries++) {
      text = await (await fetch(metricsUrl)).text();
      if (sample(text, 'herald_delivery_outcomes_total{outcome="failed"}') >= 1) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const grew = (series: string) => sample(text, series) - sample(before, series);
    expect(grew('herald_delivery_outcomes_total{outcome="succeeded"}')).toBe(1);
    expect(grew('herald_delivery_outcomes_total{outcome="failed"}')).toBe(1);
    expect(grew('herald_delivery_attempt_duration_seconds_count{response="2xx"}')).toBe(1);
    expect(grew('herald_delivery_attempt_duration_seconds_count{response="5xx"}')).toBe(1);
    expect(sample(text, 'herald_worker_attempts_in_flight')).toBe(0);
    // Each delivery held a slot once, for its exchange; both outcomes are recorded.
    expect(grew('herald_worker_slot_seconds_count')).toBe(2);
    expect(grew('herald_worker_slot_seconds_sum')).toBeGreaterThan(0);
    expect(sample(text, 'herald_worker_outcomes_recording')).toBe(0);
    expect(sample(text, 'herald_worker_deliveries_waiting')).toBe(0);
    // The process's own figures, for memory and event-loop alerts.
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
  });

  it('names an error kind when the receiver never answered', async () => {
    const closedPort = await freePort();
    const unreachable = await worker.application({ url: `http://127.0.0.1:${closedPort}/gone` });
    const id = await worker.publish(unreachable);
    await worker.settled(unreachable, id!);
    let text = '';
    for (let tries = 0; tries < 50 && !text.includes('response="connection_refused"'); tries++) {
      text = await (await fetch(metricsUrl)).text();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(sample(text, 'herald_delivery_attempt_duration_seconds_count{response="connection_refused"}')).toBe(1);
  });

  it('serves the Prometheus text format, and nothing but /metrics', async () => {
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect((await fetch(metricsUrl.replace('/metrics', '/other'))).status).toBe(404);
    expect((await fetch(metricsUrl, { method: 'POST' })).status).toBe(404);
  });

  it('stops listening when the worker stops', async () => {
    await worker.stopWorker();
    await expect(fetch(metricsUrl)).rejects.toThrow();
  });
});
