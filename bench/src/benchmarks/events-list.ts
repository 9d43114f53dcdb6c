import { ApplicationScope, EventLogRepository, PgPool } from '@herald/database';
import pg from 'pg';
import { Pool } from 'undici';
import { BenchContext, scaled } from '../harness/context';
import { BenchEnvironment, withClient } from '../harness/environment';
import { HeraldClient } from '../harness/herald-client';
import { BenchResult, Figure, writeResult } from '../harness/report';
import { assertHeraldIds, seedDeliveries, seedEvents, settleTables } from '../harness/seed';
import { BenchSink } from '../harness/sink';
import { percentile, round } from '../harness/stats';

const PAGE = 50;
const DAY_MS = 86_400_000;

/**
 * The first page of GET /application/{id}/events with 1,000,000 events in the application (and
 * a neighbour application's events interleaved in the same index), then a page from a cursor in
 * the middle: latency one request at a time, against the same statement on a bare pg client,
 * and EXPLAIN (ANALYZE, BUFFERS) of the statement the repository runs, which must read the
 * events through their key, events_pkey (application_id, id), backwards with no Sort.
 */
export async function eventsList(context: BenchContext): Promise<BenchResult> {
  const events = scaled(context, 1_000_000, 5_000);
  const neighbourEvents = scaled(context, 200_000, 1_000);
  const sink = await new BenchSink().start();
  const environment = await BenchEnvironment.create(context.serverUrl);
  try {
    const api = await environment.startApi({ HERALD_LOG_LEVEL: 'warn' });
    const admin = new HeraldClient(api.url, 4);
    const {
      key,
      applicationIds: [applicationId, neighbourId],
    } = await admin.tenant(2, sink.url);
    await admin.close();

    // Ten days of events up to a minute ago; the neighbour's fall between them in id order.
    const stepMs = Math.floor((10 * DAY_MS) / events);
    const fromMs = Date.now() - 60_000 - events * stepMs;
    const seedStarted = performance.now();
    await withClient(environment.databaseUrl, async (client) => {
      await seedEvents(client, { applicationId, count: events, fromMs, stepMs, tag: 'list' });
      await seedEvents(client, {
        applicationId: neighbourId,
        count: neighbourEvents,
        fromMs: fromMs + Math.floor(stepMs / 2),
        stepMs: Math.floor((events * stepMs) / neighbourEvents),
        tag: 'neighbour',
      });
      // Most events were delivered once; one in 50 failed.
      await seedDeliveries(client, { applicationId, status: 'succeeded', attemptCount: 1 });
      await client.query(`UPDATE deliveries SET status = 'failed', attempt_count = 6 WHERE application_id = $1 AND hashtext(id) % 50 = 0`, [
        applicationId,
      ]);
      await assertHeraldIds(client, 'events', 'evt');
      await assertHeraldIds(client, 'deliveries', 'dlv');
      await settleTables(client, ['events', 'deliveries']);
    });
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    const [{ count: deliveries }] = await environment.sql<{ count: string }>('SELECT count(*) FROM deliveries WHERE application_id = $1', [
      applicationId,
    ]);
    const [{ id: middle }] = await environment.sql<{ id: string }>(
      'SELECT id FROM events WHERE application_id = $1 ORDER BY id DESC OFFSET $2 LIMIT 1',
      [applicationId, Math.floor(events / 2)],
    );

    const http = new Pool(api.url, { connections: 1, pipelining: 1 });
    const paths = {
      first: `/application/${applicationId}/events?limit=${PAGE}`,
      middle: `/application/${applicationId}/events?limit=${PAGE}&cursor=${middle}`,
    };
    for (const path of Object.values(paths)) await expectFullPage(http, path, key);
    const statements = { first: await listStatement(applicationId, null), middle: await listStatement(applicationId, middle) };

    const get = async (path: string) => {
      const res = await http.request({ method: 'GET', path, headers: { authorization: key } });
      await res.body.arrayBuffer();
      return res.statusCode;
    };
    const measured = async (name: 'first' | 'middle') => {
      await oneAtATime(Math.min(2, context.seconds), () => get(paths[name])); // warm-up: JIT, connections, cache
      const api = await oneAtATime(context.seconds, () => get(paths[name]));
      const database = await withClient(environment.databaseUrl, (client) =>
        oneAtATime(context.seconds, async () => (await client.query(statements[name].text, statements[name].values), 200)),
      );
      const plan = await withClient(environment.databaseUrl, (client) => explain(client, statements[name]));
      return { api, database, plan };
    };
    const first = await measured('first');
    const middlePage = await measured('middle');
    await http.close();

    const figures: Figure[] = [];
    for (const [label, run] of [
      ['first page', first],
      ['page at a cursor halfway', middlePage],
    ] as const) {
      figures.push(
        { metric: `${label} p50`, value: run.api.p50, unit: 'ms', baseline: { name: 'same SQL, bare pg p50', value: run.database.p50 } },
        {
          metric: `${label} p99`,
          value: run.api.p99,
          unit: 'ms',
          baseline: { name: 'same SQL, bare pg p99', value: run.database.p99 },
          ratio: round(run.api.p99 / run.database.p99, 2),
          target: '<= 20 ms',
          pass: run.api.p99 <= 20,
        },
        {
          metric: `${label}: Sort nodes over events (EXPLAIN)`,
          value: run.plan.eventSorts,
          unit: '',
          target: `0, Index Scan Backward on ${EXPECTED_INDEX}`,
          pass: run.plan.eventSorts === 0 && run.plan.eventsScan === `Index Scan Backward using ${EXPECTED_INDEX}`,
        },
        { metric: `${label}: buffers (EXPLAIN)`, value: run.plan.buffers, unit: 'pages' },
        { metric: `${label}: requests measured`, value: run.api.count, unit: '' },
      );
      if (run.api.failures > 0) figures.push({ metric: `${label}: non-200`, value: run.api.failures, unit: '', target: '0', pass: false });
    }
    for (const run of [first, middlePage]) {
      if (run.plan.eventSorts > 0 || run.plan.eventsScan !== `Index Scan Backward using ${EXPECTED_INDEX}`) {
        throw new Error(`the events list is not a backward index scan of ${EXPECTED_INDEX}:\n${run.plan.text.join('\n')}`);
      }
    }
    return writeResult({
      name: 'events-list',
      description: `GET …/events?limit=${PAGE} with ${events} events in the application (${deliveries} deliveries; a neighbour application's ${neighbourEvents} events in the same index), one request at a time for ${context.seconds} s per page; baseline: the repository's own statement on a bare pg client`,
      figures,
      notes: [
        `seeded in SQL in ${round(seedSeconds, 1)} s (INSERT … SELECT generate_series, then VACUUM ANALYZE)`,
        `first page plan: ${first.plan.summary}`,
        `cursor page plan: ${middlePage.plan.summary}`,
        "a Sort inside SubPlan 1 orders one event's deliveries by id (one row each here), not the events",
      ],
      plans: { 'first page': first.plan.text, 'page at a cursor halfway': middlePage.plan.text },
    });
  } finally {
    await environment.dispose();
    await sink.close();
  }
}

// The events' key, (application_id, id).
const EXPECTED_INDEX = 'events_pkey';

/** The statement EventLogRepository.list runs for this page, captured from the repository itself (not a copy of its SQL). */
async function listStatement(applicationId: number, cursor: string | null): Promise<{ text: string; values: unknown[] }> {
  let captured: { text: string; values: unknown[] } | undefined;
  const capture = {
    sql: async (text: string, values: unknown[] = []) => {
      captured = { text, values };
      return [];
    },
  };
  // The scope's ownership brand is the api guard's; this statement only needs the id.
  const scope = { applicationId } as unknown as ApplicationScope;
  await new EventLogRepository(capture as unknown as PgPool).list(scope, {}, PAGE, cursor);
  if (!captured) throw new Error('EventLogRepository.list ran no statement');
  return captured;
}

async function expectFullPage(http: Pool, path: string, key: string): Promise<void> {
  const res = await http.request({ method: 'GET', path, headers: { authorization: key } });
  const body = (await res.body.json()) as { data?: unknown[]; next_cursor?: string | null };
  if (res.statusCode !== 200 || body.data?.length !== PAGE || !body.next_cursor) {
    throw new Error(`GET ${path} answered ${res.statusCode}: ${JSON.stringify(body).slice(0, 500)}`);
  }
}

/** Requests one after another for `seconds`: the latency of the route itself, no queueing. */
async function oneAtATime(
  seconds: number,
  run: () => Promise<number>,
): Promise<{ p50: number; p99: number; count: number; failures: number }> {
  const latencies: number[] = [];
  let failures = 0;
  const deadline = performance.now() + seconds * 1000;
  while (performance.now() < deadline) {
    const started = performance.now();
    const status = await run();
    latencies.push(performance.now() - started);
    if (status !== 200) failures++;
  }
  return { p50: round(percentile(latencies, 50), 2), p99: round(percentile(latencies, 99), 2), count: latencies.length, failures };
}

interface PlanNode {
  'Node Type': string;
  'Parent Relationship'?: string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  Plans?: PlanNode[];
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the statement, as text for the record and as JSON to check: the
 * events must come out of an index scan in id order, with no Sort of them. Sorts inside the
 * per-event subplan (an event's few deliveries, ordered by id) are not sorts of the events.
 */
async function explain(
  client: pg.Client,
  statement: { text: string; values: unknown[] },
): Promise<{ text: string[]; summary: string; eventSorts: number; eventsScan: string; buffers: number }> {
  const text = (await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`, statement.values)).rows.map(
    (row) => row['QUERY PLAN'],
  );
  const [{ 'QUERY PLAN': json }] = (await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.text}`, statement.values))
    .rows as { 'QUERY PLAN': [{ Plan: PlanNode }] }[];
  const root = json[0].Plan;
  const outer: PlanNode[] = [];
  const walk = (node: PlanNode) => {
    outer.push(node);
    for (const child of node.Plans ?? [])
      if (child['Parent Relationship'] !== 'SubPlan' && child['Parent Relationship'] !== 'InitPlan') walk(child);
  };
  walk(root);
  const eventSorts = outer.filter((node) => /Sort/.test(node['Node Type'])).length;
  const scan = outer.find((node) => node['Relation Name'] === 'events');
  const eventsScan = scan
    ? `${scan['Node Type']}${scan['Scan Direction'] === 'Backward' ? ' Backward' : ''}${scan['Index Name'] ? ` using ${scan['Index Name']}` : ''}`
    : 'no scan of events';
  // From the text run, so the figure matches the plan printed with it.
  const rootBuffers = /Buffers: (.*)/.exec(text.join('\n'))?.[1] ?? '';
  const buffers = [...rootBuffers.matchAll(/(?:hit|read)=(\d+)/g)].reduce((sum, match) => sum + Number(match[1]), 0);
  return {
    text,
    eventSorts,
    eventsScan,
    buffers,
    summary: `${outer.map((node) => node['Node Type']).join(' → ')}; events read by ${eventsScan}; ${eventSorts} Sort of events; ${buffers} buffers; executed in ${/Execution Time: (.*)/.exec(text.join('\n'))?.[1]}`,
  };
}
