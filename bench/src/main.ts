import { apiPublish } from './benchmarks/api-publish';
import { apiRead } from './benchmarks/api-read';
import { apiWrite } from './benchmarks/api-write';
import { claimScale } from './benchmarks/claim-scale';
import { memory, workerScale } from './benchmarks/backlog';
import { deliveryLatency, deliveryThroughput, keyedPublishes, orderedDelivery, retryTiming } from './benchmarks/delivery';
import { embedded } from './benchmarks/embedded';
import { eventSchemas } from './benchmarks/event-schemas';
import { subscriptionFilters } from './benchmarks/subscription-filters';
import { eventsList } from './benchmarks/events-list';
import { history } from './benchmarks/history';
import { isolation } from './benchmarks/isolation';
import { peers } from './benchmarks/peers';
import { recover } from './benchmarks/recover';
import { retention } from './benchmarks/retention';
import { statistics } from './benchmarks/statistics';
import { storage } from './benchmarks/storage';
import { throttle } from './benchmarks/throttle';
import { BenchContext } from './harness/context';
import { BenchResult, printTable, RESULTS_DIR } from './harness/report';

/** Every benchmark, in the order the table lists them. */
export const BENCHMARKS: Record<string, (context: BenchContext) => Promise<BenchResult>> = {
  'api-read': apiRead,
  'api-write': apiWrite,
  'api-publish': apiPublish,
  'delivery-throughput': deliveryThroughput,
  'delivery-latency': deliveryLatency,
  'keyed-publishes': keyedPublishes,
  'ordered-delivery': orderedDelivery,
  'event-schemas': eventSchemas,
  'subscription-filters': subscriptionFilters,
  statistics,
  peers,
  'retry-timing': retryTiming,
  memory,
  'worker-scale': workerScale,
  'claim-scale': claimScale,
  storage,
  isolation,
  recover,
  'events-list': eventsList,
  history,
  retention,
  throttle,
  embedded,
};

export async function runBenchmarks(names: string[], context: BenchContext): Promise<BenchResult[]> {
  const unknown = names.filter((name) => !BENCHMARKS[name]);
  if (unknown.length > 0) throw new Error(`unknown benchmark ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
  const results: BenchResult[] = [];
  for (const name of names.length > 0 ? names : Object.keys(BENCHMARKS)) {
    process.stdout.write(`running ${name}…\n`);
    results.push(await BENCHMARKS[name](context));
  }
  return results;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const names = args.filter((arg) => !arg.startsWith('--'));
  const context: BenchContext = {
    quick,
    seconds: quick ? 1 : 10,
    serverUrl: process.env.HERALD_BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
  };
  runBenchmarks(names, context).then(
    (results) => {
      printTable(results);
      console.log(`\nresults in ${RESULTS_DIR}/`);
      process.exit(0);
    },
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
