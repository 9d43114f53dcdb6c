import { freePort } from '@herald/testing';
import { BenchContext, scaled } from '../harness/context';
import {
  APPLICATIONS,
  bareClientRate,
  deliveryLatencies,
  deliveryRound,
  heraldDelivery,
  Publish,
  PUBLISHERS,
  warmUp,
  WORKER_ENV,
} from '../harness/delivery-load';
import { BenchResult, Figure, writeResult } from '../harness/report';
import { BenchSink } from '../harness/sink';
import { percentile, round } from '../harness/stats';
import { startDurableRedis, startPeer } from '../peers/systems';
import { RunningProcess } from '../harness/environment';
import { attributeDeliveries, attributionFigures, DeliveryAttribution, STATISTICS_SETTLE_MS } from '../harness/attribution';

const BATCH = 100;
const LATENCY_RATE = 200;
/** The machine's own Redis (no persistence), as on these machines. */
const SHARED_REDIS_PORT = 6379;

interface Contender {
  name: string;
  publish: Publish;
  /** Requests per round: one event each, or a batch each. */
  requests: number;
  /** The system's api and worker: the only ones not frozen while it is measured. */
  processes: RunningProcess[];
}

/**
 * Herald beside what a Node team would build instead (issue 12): the same delivery load through
 * Herald (single and batch publishes), a BullMQ deliverer on the shared Redis and on a private
 * redis-server with `appendfsync always`, and a pg-boss deliverer, in interleaved rounds with
 * the bare undici ceiling; then latency at 200 events/s for Herald and BullMQ.
 */
export async function peers(context: BenchContext): Promise<BenchResult> {
  const events = scaled(context, 20_000, 500);
  const rounds = scaled(context, 3, 1);
  const applications = context.quick ? 2 : APPLICATIONS;
  const sink = await new BenchSink().start();
  const cleanups: (() => Promise<void>)[] = [async () => sink.close()];
  try {
    const herald = await heraldDelivery(context, sink);
    cleanups.unshift(async () => (await herald.client.close(), await herald.environment.dispose()));
    const workerMetricsPort = await freePort();
    const heraldWorker = await herald.environment.startWorker({ ...WORKER_ENV, HERALD_WORKER_METRICS_PORT: String(workerMetricsPort) });
    const heraldProcesses = [herald.api, heraldWorker];
    const durableRedis = await startDurableRedis();
    cleanups.unshift(durableRedis.stop);
    const bullmq = await startPeer({ kind: 'bullmq', redisPort: SHARED_REDIS_PORT }, sink.url, applications);
    cleanups.unshift(bullmq.stop);
    const bullmqAof = await startPeer({ kind: 'bullmq', redisPort: durableRedis.port }, sink.url, applications);
    cleanups.unshift(bullmqAof.stop);
    const pgboss = await startPeer({ kind: 'pgboss', serverUrl: context.serverUrl }, sink.url, applications);
    cleanups.unshift(pgboss.stop);

    const contenders: Contender[] = [
      { name: 'Herald', publish: herald.publishOne, requests: events, processes: heraldProcesses },
      { name: 'BullMQ', publish: bullmq.publishOne, requests: events, processes: bullmq.processes },
      { name: 'BullMQ AOF always', publish: bullmqAof.publishOne, requests: events, processes: bullmqAof.processes },
      {
        name: `Herald batches of ${BATCH}`,
        publish: (i) => herald.publishBatch(i, BATCH),
        requests: Math.ceil(events / BATCH),
        processes: heraldProcesses,
      },
      { name: 'pg-boss', publish: pgboss.publishOne, requests: events, processes: pgboss.processes },
    ];
    // Every system's processes stay up for the whole run, but only the measured one runs: idle
    // pollers of the others (pg-boss's worker asks PostgreSQL every 50 ms) would take CPU and
    // PostgreSQL time from it. Frozen (SIGSTOP) they take neither.
    const everyProcess = [...new Set(contenders.flatMap((c) => c.processes))];
    // Should the bench die before its clean-up, nothing it froze stays frozen.
    const thawAll = () => everyProcess.forEach((p) => p.thaw());
    process.once('exit', thawAll);
    cleanups.unshift(async () => void process.off('exit', thawAll));
    const runOnly = (processes: RunningProcess[]) => {
      for (const p of everyProcess) if (!processes.includes(p)) p.freeze();
      for (const p of processes) p.thaw();
    };
    const warmEvents = scaled(context, 200, 50);
    for (const c of contenders) {
      runOnly(c.processes);
      await warmUp(sink, Math.ceil((warmEvents * c.requests) / events), c.publish, c.name);
    }

    const rates = new Map<string, number[]>([...contenders.map((c): [string, number[]] => [c.name, []]), ['bare', []]]);
    const latencies = new Map<string, number[]>([
      ['Herald', []],
      ['BullMQ', []],
    ]);
    const log: string[] = [];
    let checked = 0;
    const steps: { name: string; run: () => Promise<void> }[] = [
      ...contenders.map((c) => ({
        name: c.name,
        run: async () => {
          runOnly(c.processes);
          const result = await deliveryRound(sink, c.requests, c.publish, c.name);
          checked += result.ids.length;
          rates.get(c.name)!.push(result.rate);
        },
      })),
      {
        name: 'bare undici',
        run: async () => {
          runOnly([]);
          rates.get('bare')!.push(await bareClientRate(sink, events));
        },
      },
      ...[...latencies.keys()].map((name) => ({
        name: `${name} at ${LATENCY_RATE}/s`,
        run: async () => {
          runOnly(name === 'Herald' ? heraldProcesses : bullmq.processes);
          const publish = name === 'Herald' ? herald.publishOne : bullmq.publishOne;
          const measured = await deliveryLatencies(sink, LATENCY_RATE, context.seconds, publish, `${name} latency`);
          checked += measured.length;
          latencies.get(name)!.push(...measured);
        },
      })),
    ];
    // Herald first, then the peers; the next round in reverse, so drift on the shared machine falls on all.
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? steps : [...steps].reverse();
      for (const step of order) await step.run();
      log.push(`round ${r + 1}: ${order.map((step) => step.name).join(' → ')}`);
    }

    // Where Herald's time goes (issue 21): one more round of each kind of publish, alone, with
    // CPU per process, commits and the worker's slot time read around it.
    const attributions: [string, DeliveryAttribution][] = [];
    for (const c of contenders.filter((c) => c.processes === heraldProcesses)) {
      runOnly(c.processes);
      const attribution = await attributeDeliveries(
        herald.environment,
        herald.api,
        heraldWorker,
        `http://127.0.0.1:${workerMetricsPort}/metrics`,
        async () => (await deliveryRound(sink, c.requests, c.publish, c.name)).ids.length,
        scaled(context, STATISTICS_SETTLE_MS, 0),
      );
      attributions.push([c.name, attribution]);
    }

    const median = (name: string) => percentile(rates.get(name)!, 50);
    const bare = median('bare');
    const deliveries = (name: string): Figure => ({
      metric: `${name} deliveries`,
      value: Math.round(median(name)),
      unit: '/s',
      baseline: { name: 'bare undici → sink', value: Math.round(bare) },
      ratio: round(median(name) / bare, 3),
    });
    const versus = (name: string, peer: string, factor: number): Figure => {
      const ratio = median(name) / median(peer);
      return {
        metric: `${name} vs ${peer}`,
        value: Math.round(median(name)),
        unit: '/s',
        baseline: { name: peer, value: Math.round(median(peer)) },
        ratio: round(ratio, 3),
        target: `>= ${factor}× baseline`,
        pass: ratio >= factor,
      };
    };
    const p = (name: string, q: number) => round(percentile(latencies.get(name)!, q), 1);
    const batchName = contenders[3].name;
    return writeResult({
      name: 'peers',
      description:
        `${events} events by ${PUBLISHERS} publishers over ${applications} applications per system and round (median of ${rounds}), ` +
        `first publish to last receipt, one api and one worker process each, 64 deliveries in flight; latency at ${LATENCY_RATE} events/s ` +
        `for ${context.seconds} s per round, publish request start → first receipt`,
      figures: [
        ...contenders.map((c) => deliveries(c.name)),
        versus('Herald', 'BullMQ AOF always', 1.2),
        versus('Herald', 'BullMQ', 1),
        versus(batchName, 'BullMQ', 2),
        {
          metric: 'Herald latency p50',
          value: p('Herald', 50),
          unit: 'ms',
          baseline: { name: 'BullMQ p50', value: p('BullMQ', 50) },
          target: `<= BullMQ p50 + 2 ms`,
          pass: p('Herald', 50) <= p('BullMQ', 50) + 2,
        },
        { metric: 'Herald latency p99', value: p('Herald', 99), unit: 'ms', target: '<= 20 ms', pass: p('Herald', 99) <= 20 },
        { metric: 'BullMQ latency p99', value: p('BullMQ', 99), unit: 'ms' },
        { metric: 'deliveries arriving exactly once', value: checked, unit: '', target: 'all (asserted)', pass: true },
        ...attributions.flatMap(([name, attribution]) => attributionFigures(name, attribution)),
      ],
      notes: [
        ...log,
        ...[...rates].map(([name, values]) => `${name}: ${values.map((v) => Math.round(v)).join(' / ')} deliveries/s`),
        `latency p50/p99 ms: Herald ${p('Herald', 50)}/${p('Herald', 99)}, BullMQ ${p('BullMQ', 50)}/${p('BullMQ', 99)}`,
      ],
    });
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
}
