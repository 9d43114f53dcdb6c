import { BenchContext } from '../harness/context';
import { processCpuMs } from '../harness/database-footprint';
import { BenchEnvironment, HAS_TASKSET } from '../harness/environment';
import { HeraldClient } from '../harness/herald-client';
import { LoadResult, requestLoad } from '../harness/load';
import { BenchResult, Figure, writeResult } from '../harness/report';
import { round } from '../harness/stats';

const APPLICATIONS = 10;
const BATCH_SIZE = 100;

/**
 * The api's own cost of publishing (issue 21, item 2): single publishes and batches of 100 at
 * the api's full rate, its CPU per event read from /proc around each round. No worker runs: the
 * deliveries wait in the queue, so the api and the database are all that is measured. The api
 * runs on CPU 0 when taskset exists; the load generator and PostgreSQL share the other core.
 * Two rounds of each, alternated; the figures are the better round's (the machine's drift).
 */
export async function apiPublish(context: BenchContext): Promise<BenchResult> {
  const environment = await BenchEnvironment.create(context.serverUrl);
  const connections = context.quick ? 4 : 32;
  try {
    const api = await environment.startApi({}, 0);
    const client = new HeraldClient(api.url, 8);
    const { key, applicationIds } = await client.tenant(context.quick ? 2 : APPLICATIONS, 'https://hooks.example.com/publish');
    await client.close();

    let next = 0;
    const single = () => JSON.stringify({ event: 'acw_start', payload: { agent_id: 'a-17', call_id: `c-${next}` } });
    const batch = () =>
      JSON.stringify({
        events: Array.from({ length: BATCH_SIZE }, (_, i) => ({
          event: 'acw_start',
          payload: { agent_id: 'a-17', call_id: `c-${next}-${i}` },
        })),
      });
    const measureRound = async (path: string, body: () => string, perRequest: number, seconds: number) => {
      const cpuBefore = processCpuMs(api.pid);
      const load = await requestLoad({
        url: api.url,
        connections: path.endsWith('batch') ? Math.max(2, connections / 8) : connections,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            headers: { authorization: key, 'content-type': 'application/json' },
            setupRequest: (req) => ({
              ...req,
              path: `/application/${applicationIds[next++ % applicationIds.length]}/${path}`,
              body: body(),
            }),
          },
        ],
      });
      const cpuMs = processCpuMs(api.pid) - cpuBefore;
      const events = load.requestsPerSecond * seconds * perRequest;
      return { load, eventsPerSecond: load.requestsPerSecond * perRequest, apiCpuUsPerEvent: events > 0 ? (cpuMs * 1000) / events : 0 };
    };
    const warmUp = context.quick ? 1 : 2;
    await measureRound('events', single, 1, warmUp); // JIT, pools, caches
    await measureRound('events/batch', batch, BATCH_SIZE, warmUp);
    const singles: Round[] = [];
    const batches: Round[] = [];
    for (let i = 0; i < 2; i++) {
      singles.push(await measureRound('events', single, 1, context.seconds));
      batches.push(await measureRound('events/batch', batch, BATCH_SIZE, context.seconds));
    }
    const bestSingle = best(singles);
    const bestBatch = best(batches);
    const failures = [...singles, ...batches].reduce((sum, r) => sum + r.load.non2xx + r.load.errors, 0);
    const figures: Figure[] = [
      { metric: 'single publishes', value: bestSingle.eventsPerSecond, unit: 'events/s' },
      { metric: 'single publishes: api CPU per event', value: round(bestSingle.apiCpuUsPerEvent, 1), unit: 'µs' },
      { metric: 'single publishes: latency p50', value: bestSingle.load.p50, unit: 'ms' },
      { metric: 'single publishes: latency p99', value: bestSingle.load.p99, unit: 'ms' },
      { metric: `batches of ${BATCH_SIZE}`, value: bestBatch.eventsPerSecond, unit: 'events/s' },
      { metric: `batches of ${BATCH_SIZE}: api CPU per event`, value: round(bestBatch.apiCpuUsPerEvent, 1), unit: 'µs' },
      { metric: 'non-2xx + errors', value: failures, unit: '', target: '0', pass: failures === 0 },
    ];
    return writeResult({
      name: 'api-publish',
      description: `POST /application/{id}/events and …/events/batch (${BATCH_SIZE} events) over ${APPLICATIONS} applications, no worker, autocannon -c ${connections} (batches ${Math.max(2, connections / 8)}) -d ${context.seconds}${HAS_TASKSET ? ', api on CPU 0' : ''}`,
      figures,
      notes: [singles, batches].map(
        (rounds, i) =>
          `${i === 0 ? 'single publishes' : `batches of ${BATCH_SIZE}`}, every round: ${rounds.map((r) => `${r.eventsPerSecond} events/s at ${round(r.apiCpuUsPerEvent, 1)} µs`).join(', ')}`,
      ),
    });
  } finally {
    await environment.dispose();
  }
}

interface Round {
  load: LoadResult;
  eventsPerSecond: number;
  apiCpuUsPerEvent: number;
}

/** The round with the least api CPU per event: the one the machine's drift disturbed least. */
function best(rounds: Round[]): Round {
  return rounds.reduce((a, b) => (b.apiCpuUsPerEvent < a.apiCpuUsPerEvent ? b : a));
}
