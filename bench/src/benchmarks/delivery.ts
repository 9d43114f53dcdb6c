import { Pool } from 'undici';
import { BenchContext, scaled } from '../harness/context';
import { BenchEnvironment } from '../harness/environment';
import { HeraldClient, inParallel } from '../harness/herald-client';
import { BenchResult, writeResult } from '../harness/report';
import { BenchSink } from '../harness/sink';
import { percentile, round } from '../harness/stats';

const CONCURRENCY = 64;
const APPLICATIONS = 20;
/** All bench receivers are one host (127.0.0.1); real traffic spreads over many hosts. */
const WORKER_ENV = { HERALD_WORKER_HOST_CONCURRENCY: String(CONCURRENCY), HERALD_LOG_LEVEL: 'warn' };

async function deliverySetup(context: BenchContext, sink: BenchSink, retry?: { retry_value: number; max_retries: number }) {
  const environment = await BenchEnvironment.create(context.serverUrl);
  const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
  const client = new HeraldClient(api.url, CONCURRENCY);
  const tenant = await client.tenant(context.quick ? 2 : APPLICATIONS, sink.url, retry);
  const publish = (i: number) =>
    client.call(
      'POST',
      `/application/${tenant.applicationIds[i % tenant.applicationIds.length]}/events`,
      { event: 'acw_start', payload: { call_id: `c-${i}`, agent_id: `a-${i % 97}`, queue: 'support-eu', seconds: i % 300 } },
      tenant.key,
    );
  return { environment, api, client, tenant, publish };
}

/** N events published by 64 concurrent clients: first publish to last receipt, vs a bare undici client posting the same bodies. */
export async function deliveryThroughput(context: BenchContext): Promise<BenchResult> {
  const events = scaled(context, 20_000, 300);
  const sink = await new BenchSink().start();
  const { environment, client, publish } = await deliverySetup(context, sink);
  try {
    await environment.startWorker(WORKER_ENV);
    await inParallel([...Array(Math.min(200, events)).keys()], CONCURRENCY, async (i) => void (await publish(i)));
    await sink.waitFor(Math.min(200, events), 60_000); // warm-up
    sink.reset();

    const started = performance.timeOrigin + performance.now();
    await inParallel([...Array(events).keys()], CONCURRENCY, async (i) => {
      const res = await publish(i);
      if (res.status !== 202) throw new Error(`publish answered ${res.status}`);
    });
    const published = performance.timeOrigin + performance.now();
    await sink.waitFor(events, 300_000);
    const lastReceipt = Math.max(...[...sink.arrivals.values()].map((times) => times[times.length - 1]));
    const heraldRate = events / ((lastReceipt - started) / 1000);
    const publishRate = events / ((published - started) / 1000);

    const bareRate = await bareClientRate(sink, events);
    const ratio = heraldRate / bareRate;
    return writeResult({
      name: 'delivery-throughput',
      description: `${events} events published by ${CONCURRENCY} concurrent clients to ${APPLICATIONS} applications, first publish to last receipt; one worker`,
      figures: [
        { metric: 'deliveries', value: Math.round(heraldRate), unit: '/s', target: '>= 2000/s', pass: heraldRate >= 2000 },
        {
          metric: 'deliveries vs bare client',
          value: Math.round(heraldRate),
          unit: '/s',
          baseline: { name: 'bare undici → sink', value: Math.round(bareRate) },
          ratio: round(ratio, 3),
          target: '>= 25% of baseline',
          pass: ratio >= 0.25,
        },
        { metric: 'publish rate (api)', value: Math.round(publishRate), unit: 'events/s' },
      ],
    });
  } finally {
    await client.close();
    await environment.dispose();
    await sink.close();
  }
}

/** A steady 200 events/s: publish (request start) to receipt at the sink. */
export async function deliveryLatency(context: BenchContext): Promise<BenchResult> {
  const rate = 200;
  const seconds = context.seconds;
  const sink = await new BenchSink().start();
  const { environment, client, publish } = await deliverySetup(context, sink);
  try {
    await environment.startWorker(WORKER_ENV);
    await publish(0);
    await sink.waitFor(1, 30_000);
    sink.reset();

    const sentAt = new Map<string, number>();
    const total = rate * seconds;
    const origin = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = origin + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const start = performance.timeOrigin + performance.now();
      pending.push(publish(i).then((res) => void sentAt.set(res.body.data.id, start)));
    }
    await Promise.all(pending);
    await sink.waitFor(total, 60_000);
    const latencies = [...sentAt].map(([id, start]) => sink.arrivals.get(id)![0] - start);
    const p50 = round(percentile(latencies, 50), 1);
    const p99 = round(percentile(latencies, 99), 1);
    return writeResult({
      name: 'delivery-latency',
      description: `${rate} events/s for ${seconds} s; publish request start → receipt at the sink`,
      figures: [
        { metric: 'latency p50', value: p50, unit: 'ms', target: '<= 20 ms', pass: p50 <= 20 },
        { metric: 'latency p99', value: p99, unit: 'ms', target: '<= 100 ms', pass: p99 <= 100 },
        { metric: 'latency max', value: round(Math.max(...latencies), 1), unit: 'ms' },
      ],
    });
  } finally {
    await client.close();
    await environment.dispose();
    await sink.close();
  }
}

/** N deliveries that fail once with retry_value 1 s: how late the retry starts after its due time. */
export async function retryTiming(context: BenchContext): Promise<BenchResult> {
  const events = scaled(context, 1_000, 50);
  const sink = await new BenchSink((_id, nth) => (nth === 1 ? 500 : 200)).start();
  const { environment, client, publish } = await deliverySetup(context, sink, { retry_value: 1, max_retries: 1 });
  try {
    await environment.startWorker(WORKER_ENV);
    await inParallel([...Array(events).keys()], CONCURRENCY, async (i) => void (await publish(i)));
    await sink.waitFor(events * 2, 120_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const rows = await environment.sql<{ lateness_ms: number }>(`
      SELECT extract(epoch FROM (second.started_at - first.next_attempt_at)) * 1000 AS lateness_ms
        FROM delivery_attempts first
        JOIN delivery_attempts second ON second.delivery_id = first.delivery_id AND second.number = 2
       WHERE first.number = 1`);
    const lateness = rows.map((row) => Number(row.lateness_ms));
    const p99 = round(percentile(lateness, 99), 1);
    const earliest = round(Math.min(...lateness), 1);
    return writeResult({
      name: 'retry-timing',
      description: `${events} deliveries failing once (500), retry_value 1 s; lateness = retry start − its scheduled time, from the attempt log`,
      figures: [
        { metric: 'retries measured', value: lateness.length, unit: '', target: `${events}`, pass: lateness.length === events },
        { metric: 'lateness p50', value: round(percentile(lateness, 50), 1), unit: 'ms' },
        { metric: 'lateness p99', value: p99, unit: 'ms', target: '<= 250 ms', pass: p99 <= 250 },
        { metric: 'earliest', value: earliest, unit: 'ms', target: '>= 0 (never early)', pass: earliest >= 0 },
      ],
    });
  } finally {
    await client.close();
    await environment.dispose();
    await sink.close();
  }
}

/** The same bodies posted straight to the sink by undici with the same concurrency. */
async function bareClientRate(sink: BenchSink, count: number): Promise<number> {
  sink.reset();
  const pool = new Pool(`http://127.0.0.1:${sink.port}`, { connections: CONCURRENCY });
  const body = JSON.stringify({
    id: 'evt_x',
    type: 'acw_start',
    application_id: 1,
    timestamp: new Date().toISOString(),
    data: { call_id: 'c-1' },
  });
  const started = performance.now();
  await inParallel([...Array(count).keys()], CONCURRENCY, async (i) => {
    const res = await pool.request({
      method: 'POST',
      path: '/hook',
      headers: { 'content-type': 'application/json', 'webhook-id': `b-${i}` },
      body,
    });
    await res.body.dump();
  });
  const rate = count / ((performance.now() - started) / 1000);
  await pool.close();
  return rate;
}
