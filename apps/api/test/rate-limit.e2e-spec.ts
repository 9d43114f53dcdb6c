import { Clock, CLOCK } from '@herald/core';
import { expectError } from './support/expect-error';
import { Tenant } from './support/fixtures';
import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';

/** A clock the test moves by hand, so refills are exact rather than raced against. */
class ManualClock implements Clock {
  private ms = Date.now();
  now(): Date {
    return new Date(this.ms);
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

describe('rate limit per API key (PRODUCT.md §7)', () => {
  const clock = new ManualClock();
  let t: TestApp;
  let tenant: Tenant;

  /** Gives every key a full bucket again (burst 5 refills in 5 s at 1/s). */
  const refillAll = () => clock.advance(5_000);

  beforeAll(async () => {
    t = await createTestApp({
      env: { HERALD_RATE_LIMIT_PER_SECOND: '1', HERALD_RATE_LIMIT_BURST: '5' },
      override: (builder) => builder.overrideProvider(CLOCK).useValue(clock),
    });
    tenant = await t.fixtures.tenantWithWebhook();
    refillAll();
  });
  afterAll(() => t.close());

  const readWebhook = (key: string) => t.http.get(`/application/${tenant.applicationId}/webhook/secret`).set('Authorization', key);

  it('lets a key spend its burst, then answers 429-00 with Retry-After', async () => {
    for (let i = 0; i < 5; i++) expect((await readWebhook(tenant.key)).status).not.toBe(429);

    const limited = await readWebhook(tenant.key);
    expectError(limited, 429, '429-00');
    expect(limited.headers['retry-after']).toBe('1');
    expect(limited.body.error.message).toMatch(/rate limit/);
  });

  it('lets the key through again once a token has refilled, and not before', async () => {
    refillAll();
    for (let i = 0; i < 5; i++) await readWebhook(tenant.key);
    clock.advance(999);
    expectError(await readWebhook(tenant.key), 429, '429-00');
    clock.advance(1);
    expect((await readWebhook(tenant.key)).status).toBe(200);
    expectError(await readWebhook(tenant.key), 429, '429-00');
  });

  it('counts each key on its own: one key over its limit does not slow another', async () => {
    refillAll();
    const other = await t.fixtures.apiKey(tenant.accountId);
    for (let i = 0; i < 6; i++) await readWebhook(tenant.key);
    expectError(await readWebhook(tenant.key), 429, '429-00');
    expect((await readWebhook(other.key)).status).toBe(200);
  });

  it('limits admin keys too', async () => {
    refillAll();
    for (let i = 0; i < 5; i++) expect((await t.http.get('/event_types').set('Authorization', ADMIN_KEY)).status).toBe(200);
    expectError(await t.http.get('/event_types').set('Authorization', ADMIN_KEY), 429, '429-00');
  });

  it('does not count requests without a valid key, nor the public routes', async () => {
    refillAll();
    for (let i = 0; i < 10; i++) {
      expectError(await readWebhook('not-a-key'), 403, '403-02');
      expect((await t.http.get('/healthz')).status).toBe(200);
    }
    for (let i = 0; i < 5; i++) expect((await readWebhook(tenant.key)).status).toBe(200);
  });

  it('a limited request changes nothing', async () => {
    refillAll();
    const subscribe = (ensureDelivery: boolean) =>
      t.http
        .put(`/application/${tenant.applicationId}/webhook/subscription/acw_start`)
        .set('Authorization', tenant.key)
        .send({ ensure_delivery: ensureDelivery });
    for (let i = 0; i < 5; i++) expect((await subscribe(false)).status).toBe(200);
    expectError(await subscribe(true), 429, '429-00');

    refillAll();
    const list = await t.http.get(`/application/${tenant.applicationId}/webhook/subscription`).set('Authorization', tenant.key);
    expect(list.body.subscriptions).toEqual({ acw_start: { ensure_delivery: false, active: true } });
  });
});

describe('rate limit turned off (HERALD_RATE_LIMIT_PER_SECOND=0)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ env: { HERALD_RATE_LIMIT_PER_SECOND: '0', HERALD_RATE_LIMIT_BURST: '1' } });
  });
  afterAll(() => t.close());

  it('never answers 429', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 30 }, () =>
        t.http
          .get('/event_types')
          .set('Authorization', ADMIN_KEY)
          .then((res) => res.status),
      ),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
  });
});
