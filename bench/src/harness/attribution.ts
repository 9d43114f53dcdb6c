import { request } from 'undici';
import { DatabaseFootprint, processCpuMs } from './database-footprint';
import { BenchEnvironment, RunningProcess } from './environment';
import { Figure } from './report';
import { round } from './stats';

/**
 * PostgreSQL reports an idle backend's last second of counters after up to ten seconds
 * (PGSTAT_IDLE_INTERVAL); commits are read after this much quiet, so a round's are all in. The
 * smoke run (--quick) does not wait: its figures only show the harness works.
 */
export const STATISTICS_SETTLE_MS = 11_000;

/**
 * Where a delivery's cost goes (issue 21): CPU per process, commits, and how long a worker slot is
 * held. PostgreSQL's CPU is the whole server's: only the measured system runs meanwhile (the
 * others are frozen), and a pool's connection closing between two readings loses nothing.
 */
export interface DeliveryAttribution {
  deliveries: number;
  apiCpuUs: number;
  workerCpuUs: number;
  postgresCpuUs: number;
  commits: number;
  /** herald_worker_slot_seconds over the round: count, mean, and the share of slots under each bound. */
  slots: { count: number; meanMs: number; under: { boundMs: number; share: number }[] };
}

interface Snapshot {
  apiCpuMs: number;
  workerCpuMs: number;
  postgresCpuMs: number;
  commits: number;
  slots: Histogram;
}

interface Histogram {
  count: number;
  sum: number;
  buckets: Map<number, number>;
}

/**
 * Runs `runRound` (which returns how many deliveries it made) between two snapshots of the api's,
 * the worker's and the database backends' CPU (from /proc), the database's commits and the
 * worker's slot-time histogram (its /metrics on `workerMetricsUrl`).
 */
export async function attributeDeliveries(
  environment: BenchEnvironment,
  api: RunningProcess,
  worker: RunningProcess,
  workerMetricsUrl: string,
  runRound: () => Promise<number>,
  settleMs = STATISTICS_SETTLE_MS,
): Promise<DeliveryAttribution> {
  const footprint = new DatabaseFootprint(environment);
  const snapshot = async (): Promise<Snapshot> => ({
    apiCpuMs: processCpuMs(api.pid),
    workerCpuMs: processCpuMs(worker.pid),
    postgresCpuMs: await footprint.serverCpuMs(),
    commits: (await footprint.snapshot(false)).commits,
    slots: slotHistogram(await (await request(workerMetricsUrl)).body.text()),
  });
  await sleep(settleMs);
  const before = await snapshot();
  const deliveries = await runRound();
  // CPU is read at once (backends' counters are live); commits after the quiet.
  const cpu = { api: processCpuMs(api.pid), worker: processCpuMs(worker.pid), postgres: await footprint.serverCpuMs() };
  await sleep(settleMs);
  const after = await snapshot();
  const perDelivery = (ms: number) => round((ms * 1000) / deliveries);
  const count = after.slots.count - before.slots.count;
  return {
    deliveries,
    apiCpuUs: perDelivery(cpu.api - before.apiCpuMs),
    workerCpuUs: perDelivery(cpu.worker - before.workerCpuMs),
    postgresCpuUs: perDelivery(cpu.postgres - before.postgresCpuMs),
    commits: round((after.commits - before.commits) / deliveries, 3),
    slots: {
      count,
      meanMs: round(((after.slots.sum - before.slots.sum) * 1000) / Math.max(1, count), 2),
      under: [...after.slots.buckets].map(([bound, total]) => ({
        boundMs: bound * 1000,
        share: round((total - (before.slots.buckets.get(bound) ?? 0)) / Math.max(1, count), 3),
      })),
    },
  };
}

/** The attribution as figures for the record (no targets: they say where the time goes). */
export function attributionFigures(label: string, a: DeliveryAttribution): Figure[] {
  const under = (ms: number) => a.slots.under.find((u) => u.boundMs === ms)?.share ?? Number.NaN;
  return [
    {
      metric: `${label}: CPU per delivery, api / worker / PostgreSQL`,
      value: a.apiCpuUs,
      unit: `/ ${a.workerCpuUs} / ${a.postgresCpuUs} µs`,
    },
    { metric: `${label}: commits per delivery`, value: a.commits, unit: '' },
    {
      metric: `${label}: worker slot time, mean (share ≤ 5 / 10 / 25 ms)`,
      value: a.slots.meanMs,
      unit: `ms (${under(5)} / ${under(10)} / ${under(25)})`,
    },
  ];
}

function slotHistogram(metrics: string): Histogram {
  const histogram: Histogram = { count: 0, sum: 0, buckets: new Map() };
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('herald_worker_slot_seconds')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const bucket = /_bucket\{le="([^"]+)"\}/.exec(line);
    if (bucket && bucket[1] !== '+Inf') histogram.buckets.set(Number(bucket[1]), value);
    else if (line.startsWith('herald_worker_slot_seconds_sum')) histogram.sum = value;
    else if (line.startsWith('herald_worker_slot_seconds_count')) histogram.count = value;
  }
  return histogram;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
