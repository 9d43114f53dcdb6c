import { Clock, CLOCK, LatencyHistogram, latencyBucketOf, latencyPercentile } from '@herald/core';
import { sql } from '@herald/database/testing';
import { Sink } from '@herald/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { detailFields, expectError } from './support/expect-error';
import { Tenant } from './support/fixtures';
import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';

/** The real time, or a fixed moment while a test wants one. */
class SettableClock implements Clock {
  fixed: Date | null = null;
  now(): Date {
    return this.fixed ?? new Date();
  }
}

const NOW = new Date('2026-11-25T14:37:12.345Z');
const hour = (iso: string) => new Date(iso);
const WORKER = path.resolve(__dirname, '../../worker/dist/main.js');

/** GET /application/{id}/stats (PRODUCT.md §16): the window, its limits, who may read, and exact counts after real deliveries. */
describe('GET /application/{id}/stats', () => {
  const clock = new SettableClock();
  let t: TestApp;
  let tenant: Tenant;
  const stats = (query = '', key = tenant.key, applicationId = tenant.applicationId) =>
    t.http.get(`/application/${applicationId}/stats${query}`).set('Authorization', key);

  /** An hour of statistics as the finish statement leaves one (the writes are packages/database's tests). */
  async function storedHour(
    applicationId: number,
    at: Date,
    eventType: string,
    counts: { events?: number; succeeded?: number; failed?: number; attempts?: number; failedAttempts?: number },
    durations: number[] = [],
    errors: Record<string, number> = {},
  ): Promise<void> {
    const histogram = histogramOf(durations);
    await sql(
      t.db.url,
      `INSERT INTO delivery_stats (application_id, hour, event_type, events, succeeded, failed, attempts, failed_attempts, latency_buckets, latency_counts, errors)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        applicationId,
        at,
        eventType,
        counts.events ?? 0,
        counts.succeeded ?? 0,
        counts.failed ?? 0,
        counts.attempts ?? 0,
        counts.failedAttempts ?? 0,
        histogram.buckets,
        histogram.counts,
        JSON.stringify(errors),
      ],
    );
  }

  beforeAll(async () => {
    t = await createTestApp({ override: (builder) => builder.overrideProvider(CLOCK).useValue(clock) });
    tenant = await t.fixtures.tenant();
  });
  afterAll(() => t.close());

  describe('the window', () => {
    const durations = [12, 14, 15, 18, 22, 40, 41, 95, 130, 900];
    beforeAll(async () => {
      clock.fixed = NOW;
      await storedHour(
        tenant.applicationId,
        hour('2026-11-25T14:00:00Z'),
        'acw_start',
        { events: 10, succeeded: 10, attempts: 12, failedAttempts: 2 },
        durations,
        { '5xx': 2 },
      );
      await storedHour(
        tenant.applicationId,
        hour('2026-11-25T14:00:00Z'),
        'call_end',
        { events: 1, failed: 1, attempts: 1, failedAttempts: 1 },
        [],
        { timeout: 1 },
      );
      await storedHour(
        tenant.applicationId,
        hour('2026-11-25T02:00:00Z'),
        'acw_start',
        { events: 3, succeeded: 2, failed: 1, attempts: 4, failedAttempts: 2 },
        [30, 31],
        { '4xx': 2 },
      );
      // Before the default window, and in another application: never in the answers below.
      await storedHour(tenant.applicationId, hour('2026-11-24T13:00:00Z'), 'acw_start', { events: 99, succeeded: 99, attempts: 99 }, [5]);
      const other = await t.fixtures.tenant();
      await storedHour(other.applicationId, hour('2026-11-25T14:00:00Z'), 'acw_start', { events: 7, succeeded: 7, attempts: 7 }, [5]);
    });
    afterAll(() => (clock.fixed = null));

    it('defaults to the last 24 hours by hour: every hour overlapping them, zeros included, oldest first', async () => {
      const res = await stats();
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      const { buckets, by_event } = res.body.data;
      expect(buckets).toHaveLength(25);
      expect(buckets[0]).toEqual({
        start: '2026-11-24T14:00:00.000Z',
        events: 0,
        succeeded: 0,
        failed: 0,
        attempts: 0,
        failed_attempts: 0,
        latency_ms: { p50: null, p95: null },
        errors: {},
      });
      expect(buckets[24]).toEqual({
        start: '2026-11-25T14:00:00.000Z',
        events: 11,
        succeeded: 10,
        failed: 1,
        attempts: 13,
        failed_attempts: 3,
        latency_ms: { p50: latencyPercentile(histogramOf(durations), 0.5), p95: latencyPercentile(histogramOf(durations), 0.95) },
        errors: { '5xx': 2, timeout: 1 },
      });
      expect(buckets[12]).toMatchObject({
        start: '2026-11-25T02:00:00.000Z',
        events: 3,
        latency_ms: { p50: latencyPercentile(histogramOf([30, 31]), 0.5), p95: latencyPercentile(histogramOf([30, 31]), 0.95) },
        errors: { '4xx': 2 },
      });
      expect(buckets.reduce((sum: number, b: { events: number }) => sum + b.events, 0)).toBe(14);
      expect(by_event).toEqual({ acw_start: { succeeded: 12, failed: 1 }, call_end: { succeeded: 0, failed: 1 } });
    });

    it('gives percentiles within ±5% of the exact ones (nearest rank)', async () => {
      const [bucket] = (await stats('?since=2026-11-25T14:00:00Z&until=2026-11-25T15:00:00Z')).body.data.buckets;
      const sorted = [...durations].sort((a, b) => a - b);
      for (const [name, quantile] of [
        ['p50', 0.5],
        ['p95', 0.95],
      ] as const) {
        const exact = sorted[Math.ceil(quantile * sorted.length) - 1];
        expect(Math.abs(bucket.latency_ms[name] - exact)).toBeLessThanOrEqual(exact * 0.05);
      }
    });

    it('sums hours into UTC days, and reads any window up to 90 days', async () => {
      const res = await stats('?since=2026-11-24T00:00:00Z&until=2026-11-26T00:00:00Z&granularity=day');
      expect(res.status).toBe(200);
      expect(
        res.body.data.buckets.map((b: { start: string; events: number; attempts: number }) => [b.start, b.events, b.attempts]),
      ).toEqual([
        ['2026-11-24T00:00:00.000Z', 99, 99],
        ['2026-11-25T00:00:00.000Z', 14, 17],
      ]);
      const day = res.body.data.buckets[1];
      const all = histogramOf([...durations, 30, 31]);
      expect(day.latency_ms).toEqual({ p50: latencyPercentile(all, 0.5), p95: latencyPercentile(all, 0.95) });
      expect(day.errors).toEqual({ '5xx': 2, timeout: 1, '4xx': 2 });

      const ninety = await stats('?since=2026-08-27T00:00:00Z&until=2026-11-25T00:00:00Z');
      expect(ninety.status).toBe(200);
      expect(ninety.body.data.buckets).toHaveLength(2_160);
      const byDay = await stats('?since=2026-08-27T15:00:00Z&granularity=day');
      expect(byDay.body.data.buckets).toHaveLength(91);
    });

    it.each([
      ['?since=yesterday', 'since', 'since must be an ISO-8601 date or date-time'],
      ['?until=2026-13-01T00:00:00Z', 'until', 'until must be an ISO-8601 date or date-time'],
      ['?since=2026-11-25T10:00:00Z&since=2026-11-25T11:00:00Z', 'since', 'since must be'],
      ['?granularity=week', 'granularity', 'granularity must be one of hour, day'],
      ['?granularity=', 'granularity', 'granularity must be one of hour, day'],
      ['?since=2026-11-25T15:00:00Z&until=2026-11-25T15:00:00Z', 'until', 'until (2026-11-25T15:00:00.000Z) must be later than since'],
      ['?since=2026-11-26T00:00:00Z', 'since', 'must be earlier than until, which is now'],
      ['?since=2026-08-01T00:00:00Z&until=2026-11-25T00:00:00Z', 'since', 'at most 90 days apart; these are 116 days apart'],
      ['?since=2026-08-27T00:30:00Z&until=2026-11-25T00:30:00Z', 'granularity', 'makes 2161 buckets, at most 2160'],
      ['?event=acw_start', 'event', 'event'],
    ])('answers 400-03 for %s, naming %s', async (query, field, message) => {
      const res = await stats(query);
      expectError(res, 400, '400-03');
      expect(res.body.error.message).toContain(message);
      expect(detailFields(res)).toEqual([field]);
    });
  });

  describe('who may read them', () => {
    it('is the application’s account keys, admin keys and its portal links; not another account, nor a link of another application', async () => {
      expect((await stats('', ADMIN_KEY)).status).toBe(200);
      const link = await t.http.post(`/application/${tenant.applicationId}/portal_links`).set('Authorization', tenant.key).send({});
      expect(link.status).toBe(201);
      expect((await stats('', link.body.data.token)).status).toBe(200);

      const stranger = await t.fixtures.tenant();
      expectError(await stats('', stranger.key), 403, '403-03');
      expectError(await stats('', link.body.data.token, stranger.applicationId), 403, '403-03');
      expectError(await stats('', ADMIN_KEY, 2_000_000_000), 404, '404-01');
      expectError(await t.http.get(`/application/${tenant.applicationId}/stats`), 403, '403-01');
    });
  });

  describe('after real deliveries (the worker as a process, a receiver on 127.0.0.1)', () => {
    let sink: Sink;
    let worker: ChildProcess;
    let output = '';
    let receiver: Tenant;
    /** How many times each event id has been seen: the flaky receiver fails an event's first attempt only. */
    const seen = new Map<string, number>();

    beforeAll(async () => {
      if (!existsSync(WORKER)) throw new Error(`${WORKER} is missing: build the worker first (pnpm build)`);
      sink = await new Sink((_n, request) => {
        const body = JSON.parse(request.body) as { id: string; data: { outcome: string } };
        const times = (seen.get(body.id) ?? 0) + 1;
        seen.set(body.id, times);
        switch (body.data.outcome) {
          case 'fail':
            return { status: 500 };
          case 'gone':
            return { status: 410 };
          case 'flaky':
            return { status: times === 1 ? 503 : 200 };
          default:
            return { status: 200, delayMs: 5 };
        }
      }).start();
      receiver = await t.fixtures.tenant();
      const app = `/application/${receiver.applicationId}`;
      const webhook = await t.http
        .put(`${app}/webhook`)
        .set('Authorization', receiver.key)
        .send({ url: sink.url(), retry_enabled: 1, retry_config: { retry_value: 1, max_retries: 1, backoff_type: 'fixed' } });
      expect(webhook.status).toBe(200);
      for (const event of ['acw_start', 'voice_campaign_activate']) {
        const res = await t.http
          .put(`${app}/webhook/subscription/${event}`)
          .set('Authorization', receiver.key)
          .send({ ensure_delivery: true });
        expect(res.status).toBe(200);
      }
      worker = spawn(process.execPath, [WORKER], {
        env: {
          PATH: process.env.PATH,
          DATABASE_URL: t.db.url,
          HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
          HERALD_WORKER_METRICS_PORT: '0',
          HERALD_LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      worker.stdout?.on('data', (chunk) => (output += chunk));
      worker.stderr?.on('data', (chunk) => (output += chunk));
    });
    afterAll(async () => {
      if (worker && worker.exitCode === null) {
        const exited = new Promise((resolve) => worker.once('exit', resolve));
        worker.kill('SIGTERM');
        await exited;
      }
      await sink?.close();
    });

    /** The application's statistics over the last day, summed over its buckets (a run may straddle an hour). */
    async function totals(): Promise<Record<string, any>> {
      const res = await stats('', receiver.key, receiver.applicationId);
      expect(res.status).toBe(200);
      const sum = { events: 0, succeeded: 0, failed: 0, attempts: 0, failed_attempts: 0, errors: {} as Record<string, number> };
      const withLatency = [];
      for (const bucket of res.body.data.buckets) {
        for (const field of ['events', 'succeeded', 'failed', 'attempts', 'failed_attempts'] as const) sum[field] += bucket[field];
        for (const [kind, n] of Object.entries(bucket.errors as Record<string, number>)) sum.errors[kind] = (sum.errors[kind] ?? 0) + n;
        if (bucket.latency_ms.p50 !== null) withLatency.push(bucket.latency_ms);
      }
      return { ...sum, withLatency, by_event: res.body.data.by_event };
    }

    async function until(condition: (current: Record<string, any>) => boolean, what: string): Promise<Record<string, any>> {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const current = await totals();
        if (condition(current)) return current;
        if (Date.now() > deadline) throw new Error(`${what}: statistics stayed ${JSON.stringify(current)}; worker said: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }

    it('counts exactly: each delivery once when it ends, every attempt, failures by class, latency of the successes', async () => {
      const publish = async (event: string, outcome: string) => {
        const res = await t.http
          .post(`/application/${receiver.applicationId}/events`)
          .set('Authorization', receiver.key)
          .send({ event, payload: { outcome } });
        expect(res.status).toBe(202);
        expect(res.body.data.deliveries).toHaveLength(1);
        return res.body.data.deliveries[0] as string;
      };
      const plan: [string, string, number][] = [
        ['acw_start', 'ok', 6],
        ['acw_start', 'fail', 2],
        ['voice_campaign_activate', 'flaky', 2],
        ['voice_campaign_activate', 'gone', 1],
      ];
      const deliveries: Record<string, string[]> = {};
      for (const [event, outcome, count] of plan) {
        for (let i = 0; i < count; i++) (deliveries[outcome] ??= []).push(await publish(event, outcome));
      }

      // ok 6 × 1, fail 2 × 2 (a 500 is retried once), flaky 2 × 2 (503, then 200), gone 1 (410 is final).
      const after = await until((s) => s.attempts >= 15 && s.succeeded + s.failed >= 11, 'all 11 deliveries to end');
      await sink.waitFor(15);
      expect(after).toMatchObject({
        events: 11,
        succeeded: 8,
        failed: 3,
        attempts: 15,
        failed_attempts: 7,
        errors: { '5xx': 6, '4xx': 1 },
        by_event: { acw_start: { succeeded: 6, failed: 2 }, voice_campaign_activate: { succeeded: 2, failed: 1 } },
      });
      expect(after.withLatency.length).toBeGreaterThan(0);
      for (const latency of after.withLatency) {
        expect(latency.p50).toBeGreaterThanOrEqual(0);
        expect(latency.p95).toBeGreaterThanOrEqual(latency.p50);
        expect(latency.p95).toBeLessThan(15_000);
      }

      // A manual retry of a failed delivery: one more attempt (the receiver still answers 500), not another failure.
      const retry = await t.http
        .post(`/application/${receiver.applicationId}/deliveries/${deliveries.fail[0]}/retry`)
        .set('Authorization', receiver.key);
      expect(retry.status).toBe(202);
      const resent = await until((s) => s.attempts >= 16, 'the manual attempt to be counted');
      expect(resent).toMatchObject({
        events: 11,
        succeeded: 8,
        failed: 3,
        attempts: 16,
        failed_attempts: 8,
        errors: { '5xx': 7, '4xx': 1 },
      });
      expect(sink.received).toHaveLength(16);
    });
  });
});

/** Durations as a latency histogram: bucket numbers ascending, with their counts. */
function histogramOf(durations: number[]): LatencyHistogram {
  const counts = new Map<number, number>();
  for (const d of durations) counts.set(latencyBucketOf(d), (counts.get(latencyBucketOf(d)) ?? 0) + 1);
  const buckets = [...counts.keys()].sort((a, b) => a - b);
  return { buckets, counts: buckets.map((b) => counts.get(b)!) };
}
