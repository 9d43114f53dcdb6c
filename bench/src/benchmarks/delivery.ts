import { BenchContext, scaled } from '../harness/context';
import {
  alternatedRounds,
  APPLICATIONS,
  bareClientRate,
  benchEvent,
  deliveryLatencies,
  deliveryRound,
  heraldDelivery,
  HeraldDelivery,
  peakRss,
  PUBLISHERS,
  warmUp,
  WORKER_ENV,
} from '../harness/delivery-load';
import { inParallel } from '../harness/herald-client';
import { BenchResult, Figure, writeResult } from '../harness/report';
import { BenchSink } from '../harness/sink';
import { percentile, round } from '../harness/stats';

/** N events published by 64 concurrent clients: first publish to last receipt, vs a bare undici client posting the same bodies. */
export async function deliveryThroughput(context: BenchContext): Promise<BenchResult> {
  const events = scaled(context, 20_000, 300);
  const sink = await new BenchSink().start();
  const { environment, api, client, publishOne } = await heraldDelivery(context, sink);
  try {
    const worker = await environment.startWorker(WORKER_ENV);
    await warmUp(sink, Math.min(200, events), publishOne, 'Herald');
    const {
      result: herald,
      peaksMb: [apiPeak, workerPeak],
    } = await peakRss([api, worker], () => deliveryRound(sink, events, publishOne, 'Herald'));
    const heraldRate = herald.rate;
    const publishRate = herald.publishRate;

    const bareRate = await bareClientRate(sink, events);
    const ratio = heraldRate / bareRate;
    return writeResult({
      name: 'delivery-throughput',
      description: `${events} events published by ${PUBLISHERS} concurrent clients to ${APPLICATIONS} applications, first publish to last receipt; one worker`,
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
        { metric: 'api RSS at the peak of the run', value: apiPeak, unit: 'MB', target: '<= 200 MB', pass: apiPeak <= 200 },
        { metric: 'worker RSS at the peak of the run', value: workerPeak, unit: 'MB', target: '<= 200 MB', pass: workerPeak <= 200 },
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
  const { environment, client, publish, publishOne } = await heraldDelivery(context, sink);
  try {
    await environment.startWorker(WORKER_ENV);
    await publish(0);
    await sink.waitFor(1, 30_000);
    sink.reset();

    const phases = { answered: [] as number[], delivered: [] as number[] };
    const latencies = await deliveryLatencies(sink, rate, seconds, publishOne, 'Herald', phases);
    const p50 = round(percentile(latencies, 50), 1);
    const p99 = round(percentile(latencies, 99), 1);
    // Where the time goes: the publish (api, its group commit) and the rest (NOTIFY, claim, send).
    const split = (name: string, values: number[]): Figure[] => [
      { metric: `${name} p50`, value: round(percentile(values, 50), 1), unit: 'ms' },
      { metric: `${name} p99`, value: round(percentile(values, 99), 1), unit: 'ms' },
    ];
    return writeResult({
      name: 'delivery-latency',
      description: `${rate} events/s for ${seconds} s; publish request start → receipt at the sink`,
      figures: [
        { metric: 'latency p50', value: p50, unit: 'ms', target: '<= 20 ms', pass: p50 <= 20 },
        { metric: 'latency p99', value: p99, unit: 'ms', target: '<= 100 ms', pass: p99 <= 100 },
        { metric: 'latency max', value: round(Math.max(...latencies), 1), unit: 'ms' },
        ...split('publish answered', phases.answered),
        ...split('answer → receipt', phases.delivered),
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
  const { environment, client, publish } = await heraldDelivery(context, sink, { retry_value: 1, max_retries: 1 });
  try {
    await environment.startWorker(WORKER_ENV);
    await inParallel([...Array(events).keys()], PUBLISHERS, async (i) => void (await publish(i)));
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

/**
 * Single publishes that each carry a unique idempotency key (as a careful platform sends them)
 * against the same publishes without keys, each round from first publish to last receipt, in the
 * same run and on the same api and worker (issue 21: keyed publishes were 0.25× unkeyed while
 * each took a transaction and a commit of its own).
 */
/** One single publish of event `i` with `fields` added to its body (an idempotency or an ordering key); its event id. */
async function publishWith(delivery: HeraldDelivery, i: number, fields: Record<string, string>): Promise<string[]> {
  const application = delivery.tenant.applicationIds[i % delivery.tenant.applicationIds.length];
  const res = await delivery.client.call(
    'POST',
    `/application/${application}/events`,
    { ...benchEvent(i), ...fields },
    delivery.tenant.key,
  );
  if (res.status !== 202)
    throw new Error(`publish with ${Object.keys(fields).join(', ')} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return [res.body.data.id as string];
}

export async function keyedPublishes(context: BenchContext): Promise<BenchResult> {
  const events = scaled(context, 10_000, 300);
  const sink = await new BenchSink().start();
  const delivery = await heraldDelivery(context, sink);
  const { environment, client, publishOne } = delivery;
  try {
    await environment.startWorker(WORKER_ENV);
    const run = `${Date.now().toString(36)}`;
    const rates = await alternatedRounds(sink, events, {
      baseline: { label: 'unkeyed', publish: publishOne },
      // Warm-up and each round take keys of their own: a key used before would answer the first event again.
      measured: {
        label: 'keyed',
        publish: (i, round) => publishWith(delivery, (round + 2) * events + i, { idempotency_key: `${run}-${(round + 2) * events + i}` }),
      },
    });
    const unkeyedRate = rates.baseline.rate;
    const keyedRate = rates.measured.rate;
    const ratio = keyedRate / unkeyedRate;
    return writeResult({
      name: 'keyed-publishes',
      description: `${events} single publishes by ${PUBLISHERS} concurrent clients, each with a unique idempotency key, against the same without keys (two alternated rounds each)`,
      figures: [
        {
          metric: 'deliveries, each publish with a key',
          value: Math.round(keyedRate),
          unit: '/s',
          baseline: { name: 'the same publishes without keys', value: Math.round(unkeyedRate) },
          ratio: round(ratio, 3),
          target: '>= 90% of baseline',
          pass: ratio >= 0.9,
        },
      ],
    });
  } finally {
    await client.close();
    await environment.dispose();
    await sink.close();
  }
}

/**
 * Ordered delivery (PRODUCT.md §13, issue 22): the same single publishes, each carrying one of
 * 1,000 ordering keys (so each key's events go one at a time), against the same without keys,
 * in alternated rounds; delivery rate, first publish to last receipt.
 */
export async function orderedDelivery(context: BenchContext): Promise<BenchResult> {
  const events = scaled(context, 10_000, 300);
  const keys = scaled(context, 1_000, 30);
  const sink = await new BenchSink().start();
  const delivery = await heraldDelivery(context, sink);
  const { environment, client, publishOne } = delivery;
  try {
    await environment.startWorker(WORKER_ENV);
    const run = `${Date.now().toString(36)}`;
    const rates = await alternatedRounds(sink, events, {
      baseline: { label: 'unkeyed', publish: publishOne },
      measured: { label: 'ordered', publish: (i, round) => publishWith(delivery, i, { ordering_key: `${run}-${round}-${i % keys}` }) },
    });
    const ratio = rates.measured.rate / rates.baseline.rate;
    return writeResult({
      name: 'ordered-delivery',
      description: `${events} single publishes by ${PUBLISHERS} concurrent clients over ${keys} ordering keys, against the same without keys (two alternated rounds each)`,
      figures: [
        {
          metric: `deliveries, ${keys} ordering keys`,
          value: Math.round(rates.measured.rate),
          unit: '/s',
          baseline: { name: 'the same publishes without keys', value: Math.round(rates.baseline.rate) },
          ratio: round(ratio, 3),
          target: '>= 80% of baseline',
          pass: ratio >= 0.8,
        },
        { metric: 'publishes accepted, with ordering keys', value: Math.round(rates.measured.publishRate), unit: '/s' },
      ],
    });
  } finally {
    await client.close();
    await environment.dispose();
    await sink.close();
  }
}
