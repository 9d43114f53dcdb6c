import { HERALD_VERSION, ROTATED_SECRET_GRACE_SECONDS, sentRequestHeaders } from '@herald/core';
import { DeliveryLogRepository, SubscriptionRepository, WebhookRepository } from '@herald/database';
import { testAudit } from '@herald/database/testing';
import { Webhook } from 'standardwebhooks';
import { Sink } from '@herald/testing';
import { TestWorker } from './support/test-worker';

describe('delivering webhooks (PRODUCT.md §5.2–5.4)', () => {
  let worker: TestWorker;
  let sink: Sink;

  beforeAll(async () => {
    worker = await TestWorker.start();
  });
  afterAll(() => worker.close());
  beforeEach(async () => {
    sink = await new Sink().start();
  });
  afterEach(() => sink.close());

  describe('the request a receiver gets (§5.3)', () => {
    it('is a signed Standard Webhooks POST with the custom headers and the event envelope', async () => {
      const app = await worker.application({ url: sink.url('/hooks/herald?tenant=7'), headers: { 'X-Api-Token': 'secret-token' } });
      const id = await worker.publish(app, 'acw_start', { agent: 'a-17', call: { id: 'c-1', seconds: 30 } });
      const [request] = await sink.waitFor(1);
      const [event] = await worker.sql('SELECT id, created_at FROM events WHERE id = (SELECT event_id FROM deliveries WHERE id = $1)', [
        id,
      ]);

      expect(request.method).toBe('POST');
      expect(request.path).toBe('/hooks/herald?tenant=7');
      expect(request.headers).toMatchObject({
        'content-type': 'application/json',
        'user-agent': `Herald/${HERALD_VERSION}`,
        'x-api-token': 'secret-token',
        'webhook-id': event.id,
        'webhook-timestamp': expect.stringMatching(/^\d{10}$/),
        'webhook-signature': expect.stringMatching(/^v1,[A-Za-z0-9+/]+=*$/),
      });
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
      expect(JSON.parse(request.body)).toEqual({
        id: event.id,
        type: 'acw_start',
        application_id: app.applicationId,
        timestamp: new Date(event.created_at).toISOString(),
        data: { agent: 'a-17', call: { id: 'c-1', seconds: 30 } },
      });
      const secret = await worker.app.get(WebhookRepository).currentSecret(app);
      expect(new Webhook(secret!).verify(request.body, request.headers as Record<string, string>)).toEqual(JSON.parse(request.body));
      expect((await worker.settled(app, id!)).status).toBe('succeeded');
    });

    it('sends custom headers named like Object.prototype members exactly as stored', async () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of [
        ['toString', 'x'],
        ['constructor', 'c'],
        ['__proto__', 'p'],
        ['valueOf', 'v'],
      ]) {
        Object.defineProperty(headers, name, { value, enumerable: true });
      }
      const app = await worker.application({ url: sink.url(), headers });
      await worker.publish(app, 'acw_start', { n: 1 });
      const [request] = await sink.waitFor(1);
      const sent = new Map<string, string>();
      for (let i = 0; i < request.rawHeaders.length; i += 2) sent.set(request.rawHeaders[i].toLowerCase(), request.rawHeaders[i + 1]);
      expect([...sent].filter(([name]) => ['tostring', 'constructor', '__proto__', 'valueof'].includes(name))).toEqual([
        ['tostring', 'x'],
        ['constructor', 'c'],
        ['__proto__', 'p'],
        ['valueof', 'v'],
      ]);
    });

    it('records the headers it sent with the attempt, in order, as the receiver got them', async () => {
      const app = await worker.application({ url: sink.url(), headers: { 'X-Tenant': 'acme', 'X-Trace': 't-1' } });
      const id = await worker.publish(app, 'acw_start', { n: 1 });
      const [request] = await sink.waitFor(1);
      await worker.settled(app, id!);
      const delivery = await worker.app.get(DeliveryLogRepository).find(app, id!);
      const logged = delivery!.attempts[0].requestHeaders!;
      // Stored without what the attempt's row says again (the event id, the start, the JSON
      // content type); the delivery log puts those back where they were sent.
      expect(Object.keys(logged)).toEqual(['user-agent', 'X-Tenant', 'X-Trace', 'webhook-signature']);
      const recorded = sentRequestHeaders(logged, delivery!.eventId, delivery!.attempts[0].startedAt);
      expect(Object.keys(recorded)).toEqual([
        'content-type',
        'user-agent',
        'X-Tenant',
        'X-Trace',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
      ]);
      const received = new Map<string, string>();
      for (let i = 0; i < request.rawHeaders.length; i += 2) received.set(request.rawHeaders[i].toLowerCase(), request.rawHeaders[i + 1]);
      for (const [name, value] of Object.entries(recorded)) expect([name, received.get(name.toLowerCase())]).toEqual([name, value]);
    });

    it('is signed with both secrets during the 24 hours after a rotation, from the next attempt on', async () => {
      const app = await worker.application({ url: sink.url() });
      const webhooks = worker.app.get(WebhookRepository);
      const previous = (await webhooks.currentSecret(app))!;
      // An attempt first: the worker now holds this webhook's configuration (WebhookConfigs).
      await worker.publish(app);
      await sink.waitFor(1);
      const now = new Date();
      const current = (await webhooks.rotateSecret(
        app,
        { id: 'sec_rotated', secret: 'whsec_' + Buffer.alloc(32, 7).toString('base64') },
        now,
        new Date(now.getTime() + ROTATED_SECRET_GRACE_SECONDS * 1000),
        testAudit(),
      ))!;
      await worker.publish(app);
      const [, request] = await sink.waitFor(2);
      const headers = request.headers as Record<string, string>;
      expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
      for (const secret of [current, previous]) expect(() => new Webhook(secret).verify(request.body, headers)).not.toThrow();
    });

    it('is signed with the current secret alone once the previous one has expired, though nothing else changed', async () => {
      const app = await worker.application({ url: sink.url() });
      const webhooks = worker.app.get(WebhookRepository);
      const previous = (await webhooks.currentSecret(app))!;
      const now = new Date();
      const retiredUntil = new Date(now.getTime() + 1_000);
      const current = (await webhooks.rotateSecret(
        app,
        { id: 'sec_expiring', secret: 'whsec_' + Buffer.alloc(32, 9).toString('base64') },
        now,
        retiredUntil,
        testAudit(),
      ))!;
      await worker.publish(app);
      const [during] = await sink.waitFor(1);
      expect((during.headers as Record<string, string>)['webhook-signature'].split(' ')).toHaveLength(2);
      // The same configuration version, held by the worker: the expiry is applied as each attempt is signed.
      await new Promise((resolve) => setTimeout(resolve, retiredUntil.getTime() - Date.now() + 50));
      await worker.publish(app);
      const [, after] = await sink.waitFor(2);
      const headers = after.headers as Record<string, string>;
      expect(headers['webhook-signature'].split(' ')).toHaveLength(1);
      expect(() => new Webhook(current).verify(after.body, headers)).not.toThrow();
      expect(() => new Webhook(previous).verify(after.body, headers)).toThrow();
    });

    it('keeps webhook-id and the body the same on every attempt', async () => {
      sink.respond((n) => ({ status: n === 1 ? 500 : 200 }));
      const app = await worker.application({ url: sink.url(), policy: { maxRetries: 1 } });
      await worker.publish(app);
      const [first, second] = await sink.waitFor(2);
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(second.body).toBe(first.body);
    });
  });

  describe('the semantics table (§5.2)', () => {
    const closedPort = async () => {
      const probe = await new Sink().start();
      const url = probe.url();
      await probe.close();
      return url;
    };

    it('ensure_delivery + retries on: every failure is retried per the policy', async () => {
      sink.respond((n) => ({ status: n <= 2 ? 500 : 200 }));
      const app = await worker.application({
        url: sink.url(),
        policy: { maxRetries: 3 },
        subscriptions: { acw_start: { ensureDelivery: true } },
      });
      const id = (await worker.publish(app))!;
      const delivery = await worker.settled(app, id);
      expect(delivery.status).toBe('succeeded');
      expect(delivery.attempts.map((a) => a.responseStatus)).toEqual([500, 500, 200]);
    });

    it('ensure_delivery off + retries on: an answer is final, a connection never made is retried', async () => {
      sink.respond(() => ({ status: 500 }));
      const answered = await worker.application({
        url: sink.url(),
        policy: { maxRetries: 3 },
        subscriptions: { acw_start: { ensureDelivery: false } },
      });
      const id = (await worker.publish(answered))!;
      const once = await worker.settled(answered, id);
      expect(once.status).toBe('failed');
      expect(once.attempts).toHaveLength(1);

      const refused = await worker.application({
        url: await closedPort(),
        policy: { maxRetries: 2 },
        subscriptions: { acw_start: { ensureDelivery: false } },
      });
      const refusedId = (await worker.publish(refused))!;
      const retried = await worker.settled(refused, refusedId);
      expect(retried.status).toBe('failed');
      expect(retried.attempts.map((a) => a.error)).toEqual(['connection_refused', 'connection_refused', 'connection_refused']);
    });

    it.each([true, false])('retries off (ensure_delivery %p): one attempt, whatever happens', async (ensureDelivery) => {
      sink.respond(() => ({ status: 503 }));
      const app = await worker.application({
        url: sink.url(),
        retryEnabled: 0,
        policy: { maxRetries: 5 },
        subscriptions: { acw_start: { ensureDelivery } },
      });
      const id = (await worker.publish(app))!;
      const delivery = await worker.settled(app, id);
      expect(delivery.status).toBe('failed');
      expect(delivery.attempts).toHaveLength(1);
      const unreachable = await worker.application({
        url: await closedPort(),
        retryEnabled: 0,
        policy: { maxRetries: 5 },
        subscriptions: { acw_start: { ensureDelivery } },
      });
      const unreachableId = (await worker.publish(unreachable))!;
      expect((await worker.settled(unreachable, unreachableId)).attempts).toHaveLength(1);
    });

    it('treats a redirect as a failure and does not follow it', async () => {
      sink.respond((n) => (n === 1 ? { status: 302, headers: { location: sink.url('/elsewhere') } } : { status: 200 }));
      const app = await worker.application({ url: sink.url(), policy: { maxRetries: 1 } });
      const id = (await worker.publish(app))!;
      const delivery = await worker.settled(app, id);
      expect(delivery.attempts.map((a) => a.responseStatus)).toEqual([302, 200]);
      expect(sink.received.map((r) => r.path)).toEqual(['/hook', '/hook']);
    });

    it('stops at 410 Gone even with retries and ensure_delivery', async () => {
      sink.respond(() => ({ status: 410 }));
      const app = await worker.application({ url: sink.url(), policy: { maxRetries: 5 } });
      const id = (await worker.publish(app))!;
      const delivery = await worker.settled(app, id);
      expect(delivery.status).toBe('failed');
      expect(delivery.attempts).toHaveLength(1);
    });

    it('waits as long as Retry-After asks on 429, not less', async () => {
      sink.respond((n) => (n === 1 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 200 }));
      const app = await worker.application({ url: sink.url(), policy: { retryValue: 1, maxRetries: 1 } });
      const id = (await worker.publish(app))!;
      const [first, second] = await sink.waitFor(2, 10_000);
      expect(second.at - first.at).toBeGreaterThanOrEqual(1_950);
      expect(second.at - first.at).toBeLessThan(3_500);
      expect((await worker.settled(app, id)).status).toBe('succeeded');
    });
  });

  it('follows the stored schedule with real delays: multiplier 1 s × 2, two retries', async () => {
    sink.respond(() => ({ status: 500 }));
    const app = await worker.application({
      url: sink.url(),
      policy: { retryValue: 1, maxRetries: 2, backoffType: 'multiplier', backoffValue: 2 },
    });
    const id = (await worker.publish(app))!;
    const [first, second, third] = await sink.waitFor(3, 10_000);
    expect(second.at - first.at).toBeGreaterThanOrEqual(950);
    expect(second.at - first.at).toBeLessThan(1_900);
    expect(third.at - second.at).toBeGreaterThanOrEqual(1_950);
    expect(third.at - second.at).toBeLessThan(2_900);
    const delivery = await worker.settled(app, id);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts.map((a) => a.number)).toEqual([1, 2, 3]);
    const gaps = delivery.attempts.slice(0, 2).map((a) => a.nextAttemptAt!.getTime() - a.startedAt.getTime());
    expect(gaps[0]).toBeGreaterThanOrEqual(1_000);
    expect(gaps[1]).toBeGreaterThanOrEqual(2_000);
    expect(delivery.attempts[2].nextAttemptAt).toBeNull();
  });

  it('starts retries that fall due one after another on time, not at the next poll', async () => {
    sink.respond((n) => ({ status: n <= 150 ? 500 : 200 }));
    const app = await worker.application({ url: sink.url(), policy: { retryValue: 1, maxRetries: 1, backoffType: 'fixed' } });
    const ids = await Promise.all(Array.from({ length: 150 }, () => worker.publish(app)));
    await sink.waitFor(300, 20_000);
    for (const id of ids) await worker.settled(app, id!);
    const [row] = await worker.sql<{ latest_ms: number; earliest_ms: number }>(
      `SELECT max(extract(epoch FROM (second.started_at - first.next_attempt_at)) * 1000) AS latest_ms,
              min(extract(epoch FROM (second.started_at - first.next_attempt_at)) * 1000) AS earliest_ms
         FROM delivery_attempts first
         JOIN delivery_attempts second ON second.delivery_id = first.delivery_id AND second.number = 2
        WHERE first.number = 1 AND first.delivery_id = ANY($1)`,
      [ids],
    );
    expect(Number(row.earliest_ms)).toBeGreaterThanOrEqual(0);
    // The poll interval is 1 s: a loop that waited for it would show here.
    expect(Number(row.latest_ms)).toBeLessThan(600);
  });

  it('reads the URL, headers and policy stored when each attempt starts', async () => {
    sink.respond(() => ({ status: 500 }));
    const second = await new Sink().start();
    try {
      const app = await worker.application({ url: sink.url(), headers: { 'X-Version': '1' }, policy: { retryValue: 1, maxRetries: 1 } });
      const id = (await worker.publish(app))!;
      await sink.waitFor(1);
      await worker.configure(app, { url: second.url('/v2'), headers: { 'X-Version': '2' }, policy: { retryValue: 1, maxRetries: 1 } });
      const [moved] = await second.waitFor(1);
      expect(moved.headers['x-version']).toBe('2');
      const delivery = await worker.settled(app, id);
      expect(delivery.attempts.map((a) => a.url)).toEqual([sink.url(), second.url('/v2')]);
    } finally {
      await second.close();
    }
  });

  describe('cancellation when the attempt comes due', () => {
    it('cancels, without an attempt, when the subscription is inactive or gone, or the webhook is gone', async () => {
      const app = await worker.application({
        url: sink.url(),
        subscriptions: { acw_start: { ensureDelivery: true }, voice_campaign_activate: {} },
      });
      const noWebhook = await worker.application({ url: sink.url() });
      await worker.stopWorker();
      try {
        const inactive = (await worker.publish(app, 'acw_start'))!;
        const gone = (await worker.publish(app, 'voice_campaign_activate'))!;
        const orphaned = (await worker.publish(noWebhook, 'acw_start'))!;
        await worker.app.get(SubscriptionRepository).upsert(app, 'acw_start', { active: false }, testAudit);
        await worker.app.get(SubscriptionRepository).delete(app, 'voice_campaign_activate', testAudit);
        await worker.app.get(WebhookRepository).delete(noWebhook, testAudit);
        await worker.startWorker();
        for (const [scope, id] of [
          [app, inactive],
          [app, gone],
          [noWebhook, orphaned],
        ] as const) {
          const delivery = await worker.settled(scope, id);
          expect(delivery.status).toBe('cancelled');
          expect(delivery.attempts).toEqual([]);
        }
        expect(sink.received).toEqual([]);
      } finally {
        await worker.startWorker();
      }
    });
  });

  it('delivers the test ping without a subscription', async () => {
    const app = await worker.application({ url: sink.url(), subscriptions: {} });
    const id = (await worker.publish(app, 'webhook.test', { message: 'hi' }, true))!;
    const [request] = await sink.waitFor(1);
    expect(JSON.parse(request.body)).toMatchObject({ type: 'webhook.test', data: { message: 'hi' } });
    expect((await worker.settled(app, id)).status).toBe('succeeded');
  });

  it('keeps the first 4 KiB of an answer', async () => {
    sink.respond(() => ({ status: 500, body: 'é'.repeat(5_000) }));
    const app = await worker.application({ url: sink.url() });
    const id = (await worker.publish(app))!;
    const [attempt] = (await worker.settled(app, id)).attempts;
    expect(Buffer.byteLength(attempt.responseExcerpt!.replace(/\uFFFD$/, ''))).toBeLessThanOrEqual(4096);
    expect(attempt.responseExcerpt!.length).toBeGreaterThan(2_000);
  });

  it('gives a retried-by-hand failed delivery exactly one more attempt', async () => {
    sink.respond(() => ({ status: 500 }));
    const app = await worker.application({ url: sink.url(), policy: { maxRetries: 0 } });
    const id = (await worker.publish(app))!;
    await worker.settled(app, id);
    await worker.app.get(DeliveryLogRepository).requestAttempt(app, id, new Date());
    await sink.waitFor(2);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const delivery = await worker.settled(app, id);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts).toHaveLength(2);
    expect(sink.received).toHaveLength(2);
  });
});

describe('destination safety at connect time (§5.4)', () => {
  let worker: TestWorker;
  let sink: Sink;
  beforeAll(async () => {
    // The api would accept these URLs; this worker allows only 127.0.0.2, so 127.0.0.1 is internal to it.
    worker = await TestWorker.start({ HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.2/32' });
    sink = await new Sink().start();
  });
  afterAll(async () => {
    await sink.close();
    await worker.close();
  });

  it.each([
    ['a name that resolves to loopback', () => `http://localhost:${sink.port}/hook`],
    ['an IP literal', () => sink.url()],
    ['an IPv4-mapped IPv6 literal', () => `http://[::ffff:127.0.0.1]:${sink.port}/hook`],
    ['an IPv4-compatible IPv6 literal', () => `http://[::127.0.0.1]:${sink.port}/hook`],
    ['a NAT64 literal', () => `http://[64:ff9b::127.0.0.1]:${sink.port}/hook`],
    ['a 6to4 literal', () => `http://[2002:7f00:1::1]:${sink.port}/hook`],
  ])('refuses %s: destination_blocked, final, nothing sent', async (_, url) => {
    const app = await worker.application({ url: url(), policy: { maxRetries: 3 } });
    const id = (await worker.publish(app))!;
    const delivery = await worker.settled(app, id);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({ error: 'destination_blocked', responseStatus: null });
    expect(sink.received).toEqual([]);
  });
});

describe('timeouts and concurrency limits', () => {
  it('ends an attempt after HERALD_DELIVERY_TIMEOUT_SECONDS as a timeout (which may have reached the receiver)', async () => {
    const worker = await TestWorker.start({ HERALD_DELIVERY_TIMEOUT_SECONDS: '1', HERALD_DELIVERY_LEASE_SECONDS: '5' });
    const sink = await new Sink(() => ({ status: 200, delayMs: 3_000 })).start();
    try {
      const app = await worker.application({
        url: sink.url(),
        policy: { maxRetries: 2 },
        subscriptions: { acw_start: { ensureDelivery: false } },
      });
      const id = (await worker.publish(app))!;
      const delivery = await worker.settled(app, id);
      expect(delivery.status).toBe('failed');
      expect(delivery.attempts).toHaveLength(1);
      expect(delivery.attempts[0].error).toBe('timeout');
      expect(delivery.attempts[0].durationMs).toBeGreaterThanOrEqual(950);
      expect(delivery.attempts[0].durationMs).toBeLessThan(2_500);
    } finally {
      await sink.close();
      await worker.close();
    }
  });

  it('keeps at most HERALD_WORKER_HOST_CONCURRENCY attempts in flight to one host, and delivers them all', async () => {
    const worker = await TestWorker.start({ HERALD_WORKER_HOST_CONCURRENCY: '2' });
    const sink = await new Sink(() => ({ status: 200, delayMs: 300 })).start();
    try {
      const app = await worker.application({ url: sink.url() });
      // Published while the worker is stopped, so its first claim sees all eight at once.
      await worker.stopWorker();
      const ids = [];
      for (let i = 0; i < 8; i++) ids.push((await worker.publish(app, 'acw_start', { i }))!);
      await worker.startWorker();
      for (const id of ids) expect((await worker.settled(app, id)).status).toBe('succeeded');
      expect(sink.received).toHaveLength(8);
      expect(sink.maxConcurrent).toBe(2);
    } finally {
      await sink.close();
      await worker.close();
    }
  });

  it('keeps at most HERALD_WORKER_CONCURRENCY attempts in flight overall', async () => {
    const worker = await TestWorker.start({ HERALD_WORKER_CONCURRENCY: '3', HERALD_WORKER_HOST_CONCURRENCY: '10' });
    const sinks = await Promise.all([1, 2, 3].map(() => new Sink(() => ({ status: 200, delayMs: 300 })).start()));
    let concurrent = 0;
    let maxConcurrent = 0;
    for (const sink of sinks) {
      sink.respond(() => {
        concurrent++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        setTimeout(() => concurrent--, 300);
        return { status: 200, delayMs: 300 };
      });
    }
    try {
      const apps = await Promise.all(sinks.map((sink) => worker.application({ url: sink.url() })));
      await worker.stopWorker();
      const ids: [(typeof apps)[number], string][] = [];
      for (const app of apps) for (let i = 0; i < 3; i++) ids.push([app, (await worker.publish(app, 'acw_start', { i }))!]);
      await worker.startWorker();
      for (const [app, id] of ids) expect((await worker.settled(app, id)).status).toBe('succeeded');
      expect(maxConcurrent).toBe(3);
    } finally {
      await Promise.all(sinks.map((sink) => sink.close()));
      await worker.close();
    }
  });
});
