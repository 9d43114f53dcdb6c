import { Pool } from 'undici';
import { BenchContext } from './context';
import { BenchEnvironment, RunningProcess } from './environment';
import { HeraldClient, inParallel, Tenant } from './herald-client';
import { pacedSamples } from './load';
import { BenchSink } from './sink';

/** The delivery load every delivery benchmark shares: 64 concurrent publishers over 20 applications. */
export const PUBLISHERS = 64;
export const APPLICATIONS = 20;
/** All bench receivers are one host (127.0.0.1); real traffic spreads over many hosts. */
export const WORKER_ENV = { HERALD_WORKER_HOST_CONCURRENCY: String(PUBLISHERS), HERALD_LOG_LEVEL: 'warn' };

/** The i-th event of a run: the same type and payload whichever system publishes it. */
export function benchEvent(i: number): { event: string; payload: Record<string, unknown> } {
  return { event: 'acw_start', payload: { call_id: `c-${i}`, agent_id: `a-${i % 97}`, queue: 'support-eu', seconds: i % 300 } };
}

/** Publishes event i; resolves with the ids of the events the system accepted (one, or a whole batch). */
export type Publish = (i: number) => Promise<string[]>;

export interface HeraldDelivery {
  environment: BenchEnvironment;
  api: RunningProcess;
  client: HeraldClient;
  tenant: Tenant;
  /** POST …/events for event i, to application i mod the tenant's count; the raw answer. */
  publish(i: number): Promise<{ status: number; body: any }>;
  /** publish(i), failing unless it answered 202. */
  publishOne: Publish;
  /** POST …/events/batch with events i·size … i·size + size − 1, all to one application; fails unless 202. */
  publishBatch(i: number, size: number): Promise<string[]>;
}

/** Herald's api on a throw-away database with a tenant whose webhooks point at the sink (no worker yet). */
export async function heraldDelivery(
  context: BenchContext,
  sink: BenchSink,
  retry?: { retry_value: number; max_retries: number },
): Promise<HeraldDelivery> {
  const environment = await BenchEnvironment.create(context.serverUrl);
  const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
  const client = new HeraldClient(api.url, PUBLISHERS);
  const tenant = await client.tenant(context.quick ? 2 : APPLICATIONS, sink.url, retry);
  const applicationOf = (i: number) => tenant.applicationIds[i % tenant.applicationIds.length];
  const publish = (i: number) => client.call('POST', `/application/${applicationOf(i)}/events`, benchEvent(i), tenant.key);
  return {
    environment,
    api,
    client,
    tenant,
    publish,
    publishOne: async (i) => [accepted(await publish(i)).data.id as string],
    publishBatch: async (i, size) => {
      const events = Array.from({ length: size }, (_, k) => benchEvent(i * size + k));
      const res = await client.call('POST', `/application/${applicationOf(i)}/events/batch`, { events }, tenant.key);
      return (accepted(res).data as { id: string }[]).map((event) => event.id);
    },
  };
}

function accepted(res: { status: number; body: any }): any {
  if (res.status !== 202) throw new Error(`publish answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

export interface DeliveryRound {
  /** Events delivered per second, first publish to last receipt. */
  rate: number;
  /** Events accepted per second, first publish to last answer. */
  publishRate: number;
  ids: string[];
}

/**
 * `requests` publishes by 64 concurrent publishers, timed from the first publish to the last
 * receipt at the sink; the sink is reset first and must end up with each accepted event exactly once.
 */
export async function deliveryRound(sink: BenchSink, requests: number, publish: Publish, label: string): Promise<DeliveryRound> {
  sink.reset();
  const ids: string[] = [];
  const started = performance.timeOrigin + performance.now();
  await inParallel([...Array(requests).keys()], PUBLISHERS, async (i) => void ids.push(...(await publish(i))));
  const published = performance.timeOrigin + performance.now();
  await sink.waitFor(ids.length, 300_000);
  const lastReceipt = Math.max(...[...sink.arrivals.values()].map((times) => times[times.length - 1]));
  await assertExactlyOnce(sink, ids, label);
  return {
    rate: ids.length / ((lastReceipt - started) / 1000),
    publishRate: ids.length / ((published - started) / 1000),
    ids,
  };
}

/**
 * Two ways of publishing the same number of events, each warmed up, then measured in rounds
 * that alternate between them, so both see the same minutes of a shared machine: the mean
 * rates of each (first publish to last receipt, and publishing alone). `publish(i, round)` gets
 * a round number (-1 while warming up) so it can make each request unique where it must be.
 */
export async function alternatedRounds(
  sink: BenchSink,
  events: number,
  variants: { baseline: AlternatedPublish; measured: AlternatedPublish },
  rounds = 2,
): Promise<{ baseline: AlternatedRates; measured: AlternatedRates }> {
  const warmUpCount = Math.min(200, events);
  await warmUp(sink, warmUpCount, (i) => variants.baseline.publish(i, -1), variants.baseline.label);
  await warmUp(sink, warmUpCount, (i) => variants.measured.publish(i, -1), variants.measured.label);
  const baseline: DeliveryRound[] = [];
  const measured: DeliveryRound[] = [];
  for (let round = 0; round < rounds; round++) {
    baseline.push(await deliveryRound(sink, events / rounds, (i) => variants.baseline.publish(i, round), variants.baseline.label));
    measured.push(await deliveryRound(sink, events / rounds, (i) => variants.measured.publish(i, round), variants.measured.label));
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b) / values.length;
  const ratesOf = (runs: DeliveryRound[]) => ({ rate: mean(runs.map((r) => r.rate)), publishRate: mean(runs.map((r) => r.publishRate)) });
  return { baseline: ratesOf(baseline), measured: ratesOf(measured) };
}

export interface AlternatedPublish {
  label: string;
  publish: (i: number, round: number) => Promise<string[]>;
}

export interface AlternatedRates {
  /** Deliveries a second, first publish to last receipt. */
  rate: number;
  /** Events accepted a second, first publish to last answer. */
  publishRate: number;
}

/**
 * The highest resident set size of each process while `work` runs, sampled from /proc every
 * 100 ms (issue 12: RSS at the peak of the throughput run, not only at rest), in MB.
 */
export async function peakRss<T>(processes: RunningProcess[], work: () => Promise<T>): Promise<{ result: T; peaksMb: number[] }> {
  const peaksMb = processes.map((p) => p.rssMb());
  const sample = setInterval(() => processes.forEach((p, i) => (peaksMb[i] = Math.max(peaksMb[i], p.rssMb()))), 100);
  try {
    const result = await work();
    processes.forEach((p, i) => (peaksMb[i] = Math.max(peaksMb[i], p.rssMb())));
    return { result, peaksMb };
  } finally {
    clearInterval(sample);
  }
}

/** Publishes `count` and waits for their deliveries: connections, JIT and caches warm before a timed round. */
export async function warmUp(sink: BenchSink, count: number, publish: Publish, label: string): Promise<void> {
  sink.reset();
  const ids: string[] = [];
  await inParallel([...Array(count).keys()], PUBLISHERS, async (i) => void ids.push(...(await publish(i))));
  await sink.waitFor(ids.length, 60_000);
  await assertExactlyOnce(sink, ids, `${label} (warm-up)`);
  sink.reset();
}

/**
 * Fails unless the sink received every id once and nothing else, still true a moment after the
 * last expected arrival (a duplicate sent late would land then).
 */
export async function assertExactlyOnce(sink: BenchSink, ids: string[], label: string): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 250));
  const missing = ids.filter((id) => !sink.arrivals.has(id));
  const duplicated = [...sink.arrivals].filter(([, times]) => times.length > 1).map(([id]) => id);
  const expected = new Set(ids);
  const unexpected = [...sink.arrivals.keys()].filter((id) => !expected.has(id));
  if (missing.length > 0 || duplicated.length > 0 || unexpected.length > 0 || expected.size !== ids.length) {
    throw new Error(
      `${label}: not every delivery arrived exactly once: ${missing.length} missing (e.g. ${missing[0]}), ` +
        `${duplicated.length} duplicated (e.g. ${duplicated[0]}), ${unexpected.length} unexpected (e.g. ${unexpected[0]}), ${ids.length - expected.size} ids accepted twice`,
    );
  }
}

/**
 * Events published open-loop at `rate` for `seconds` (pacedSamples: no coordinated omission);
 * each one's latency is publish request start → its first receipt at the sink, in ms.
 */
export async function deliveryLatencies(
  sink: BenchSink,
  rate: number,
  seconds: number,
  publish: Publish,
  label: string,
  /** Filled, when given, with each event's split: publish start → its answer, and answer → receipt. */
  phases?: { answered: number[]; delivered: number[] },
): Promise<number[]> {
  sink.reset();
  const sentAt = new Map<string, { start: number; answered: number }>();
  const samples = await pacedSamples(rate, seconds, async (i) => {
    const start = performance.timeOrigin + performance.now();
    const ids = await publish(i);
    const answered = performance.timeOrigin + performance.now();
    for (const id of ids) sentAt.set(id, { start, answered });
    return 202;
  });
  if (samples.errors > 0) throw new Error(`${label}: ${samples.errors} publishes failed`);
  await sink.waitFor(sentAt.size, 60_000);
  await assertExactlyOnce(sink, [...sentAt.keys()], label);
  for (const [id, { start, answered }] of phases ? sentAt : []) {
    phases!.answered.push(answered - start);
    phases!.delivered.push(sink.arrivals.get(id)![0] - answered);
  }
  return [...sentAt].map(([id, { start }]) => sink.arrivals.get(id)![0] - start);
}

/** The ceiling: the same kind of body posted straight to the sink by undici with the publishers' concurrency. */
export async function bareClientRate(sink: BenchSink, count: number): Promise<number> {
  sink.reset();
  const pool = new Pool(`http://127.0.0.1:${sink.port}`, { connections: PUBLISHERS });
  const body = JSON.stringify({
    id: 'evt_x',
    type: 'acw_start',
    application_id: 1,
    timestamp: new Date().toISOString(),
    data: { call_id: 'c-1' },
  });
  const started = performance.now();
  await inParallel([...Array(count).keys()], PUBLISHERS, async (i) => {
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

/** Waits until `expected` attempts are recorded (they are recorded after the receipt). */
export async function waitForAttempts(environment: BenchEnvironment, expected: number, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await environment.sql<{ done: string }>(`SELECT count(*)::text AS done FROM delivery_attempts`);
    if (Number(row.done) >= expected) return;
    if (Date.now() > deadline) throw new Error(`only ${row.done} of ${expected} attempts recorded after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
