import { BenchContext, scaled } from '../harness/context';
import {
  APPLICATIONS,
  bareClientRate,
  deliveryLatencies,
  deliveryRound,
  heraldDelivery,
  peakRss,
  PUBLISHERS,
  warmUp,
  WORKER_ENV,
} from '../harness/delivery-load';
import { inParallel } from '../harness/herald-client';
import { BenchResult, writeResult } from '../harness/report';
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

    const latencies = await deliveryLatencies(sink, rate, seconds, publishOne, 'Herald');
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
