import { createTemplateDatabase, cloneDatabase, dropTestDatabases, testServerUrl, type TestDatabase } from '@herald/database/testing';
import { freePort, Sink, waitForOk } from '@herald/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The console in a real browser (issue 13): the built api and worker on their own PostgreSQL
 * database, a receiver on 127.0.0.1, and Debian's Chromium, driven by role and label as a person
 * with a screen reader would. Any browser console error or failed request fails the test, except
 * the API errors the test provokes on purpose (listed in `expected`). Screenshots of every page,
 * light and dark, go to test/screenshots/.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../..');
const SHOTS = path.join(here, 'screenshots');
const ADMIN_KEY = 'browser-admin-key-0123456789abcdef';
const APP_ID = 42;
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

interface Service {
  child: ChildProcess;
  output(): string;
}

function startService(name: 'api' | 'worker', env: NodeJS.ProcessEnv): Service {
  const child = spawn(process.execPath, [path.join(repo, 'apps', name, 'dist/main.js')], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

async function stopService(service: Service | undefined): Promise<void> {
  if (!service || service.child.exitCode !== null) return;
  const exited = new Promise((resolve) => service.child.once('exit', resolve));
  service.child.kill('SIGTERM');
  await exited;
}

describe('the console in Chromium', () => {
  let template: string;
  let db: TestDatabase;
  let api: Service;
  let worker: Service;
  let sink: Sink;
  let browser: Browser;
  let page: Page;
  let base: string;
  let sinkStatus = 200;
  /** The account key of the account that owns applications 7 and 42. */
  let accountKey: string;
  /** What went wrong in the browser that the test did not ask for. */
  const problems: string[] = [];
  /** API answers of 4xx the test provokes on purpose ("METHOD /path status"), each allowed once. */
  const expected: string[] = [];

  const adminCall = async (method: string, url: string, body?: unknown) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { authorization: ADMIN_KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };

  const shot = async (name: string) => {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  };

  /** Records what goes wrong in a page: console errors, page errors, failed requests, unasked-for 4xx/5xx. */
  const watch = (target: Page) => {
    target.on('console', (message) => {
      if (message.type() !== 'error' && message.type() !== 'warning') return;
      // Chromium reports every 4xx/5xx fetch this way; the response listener judges those.
      if (/^Failed to load resource: the server responded with a status of \d+/.test(message.text())) return;
      problems.push(`console ${message.type()}: ${message.text()}`);
    });
    target.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    target.on('requestfailed', (request) =>
      problems.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText}`),
    );
    target.on('response', (response) => {
      if (response.status() < 400) return;
      const what = `${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`;
      const at = expected.indexOf(what);
      if (at >= 0) expected.splice(at, 1);
      else problems.push(`unexpected answer: ${what}`);
    });
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    template = await createTemplateDatabase(testServerUrl());
    db = await cloneDatabase(testServerUrl(), template);
    sink = await new Sink(() => ({
      status: sinkStatus,
      body: sinkStatus === 200 ? '{"ok":true}' : '{"error":"receiver is down"}',
    })).start();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: db.url,
      HERALD_ADMIN_KEY: ADMIN_KEY,
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
      HERALD_LOG_LEVEL: 'warn',
      HERALD_RATE_LIMIT_PER_SECOND: '0',
    };
    api = startService('api', { ...env, PORT: String(port), HOST: '127.0.0.1' });
    worker = startService('worker', { ...env, HERALD_WORKER_METRICS_PORT: '0' });
    await waitForOk(`${base}/readyz`, 30_000, () => (api.child.exitCode !== null ? api.output() : null));
    const account = await adminCall('POST', '/admin/accounts', { name: 'Acme Contact Center' });
    await adminCall('POST', '/admin/applications', { id: APP_ID, name: 'Support EU', account_id: account.data.id });
    await adminCall('POST', '/admin/applications', { id: 7, name: 'Sales US', account_id: account.data.id });
    accountKey = (await adminCall('POST', '/admin/api_keys', { account_id: account.data.id, name: 'production' })).data.key;

    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    page = await context.newPage();
    watch(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stopService(worker);
    await stopService(api);
    await sink?.close();
    if (template) await dropTestDatabases(testServerUrl(), template);
  });

  it('signs in, configures the webhook, subscribes, delivers, retries, rotates the secret and signs out', async () => {
    const response = await page.goto(`${base}/console`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByRole('heading', { name: 'Herald Console' }).waitFor();
    await shot('sign-in-light');

    // Sign in with the operator's key: it goes to sessionStorage, nowhere else.
    await page.getByLabel('API key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: new RegExp(`Application ${APP_ID}\\b`) }).waitFor();
    expect(await page.evaluate(() => [sessionStorage.getItem('herald.credential'), localStorage.length])).toEqual([ADMIN_KEY, 0]);
    await shot('applications-light');

    // From the keyboard: the first Tab reaches the skip link, which moves the focus to the page's
    // content and leaves the address where it was (the hash router must not read it as a route).
    const addressBeforeSkip = page.url();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    expect(page.url()).toBe(addressBeforeSkip);

    // The webhook: a bad URL is refused beside its field, then fixed; the schedule shows before saving.
    expected.push(`GET /application/${APP_ID}/webhook 404`);
    await page.getByRole('link', { name: new RegExp(`Application ${APP_ID}\\b`) }).click();
    const url = page.getByLabel('Target URL');
    await url.waitFor();
    expected.push(`PUT /application/${APP_ID}/webhook 400`);
    await url.fill('ftp://example.com/hook');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await expect.poll(() => url.getAttribute('aria-invalid'), { timeout: 15_000 }).toBe('true');
    const describedBy = (await url.getAttribute('aria-describedby'))!;
    const fieldError = await page.locator(`[id="${describedBy}"]`).textContent();
    expect(fieldError).toMatch(/url/i);
    await shot('webhook-field-error-light');

    await url.fill(sink.url('/hook'));
    await page.getByLabel('First retry after (seconds)').fill('1');
    await page.getByLabel('Maximum retries').fill('3');
    await page.getByLabel('Backoff', { exact: true }).selectOption('linear');
    await page.getByLabel('Backoff value').fill('2');
    const preview = page.getByRole('region', { name: 'Retry schedule preview' });
    await expect
      .poll(() => preview.getByRole('listitem').allTextContents())
      .toEqual(['First attemptat 0 s', 'Retry 1 after 1 sat 1 s', 'Retry 2 after 3 sat 4 s', 'Retry 3 after 5 sat 9 s']);
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header 1 name').fill('X-Api-Token');
    await page.getByLabel('Header 1 value').fill('token-123');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    expect(await url.getAttribute('aria-invalid')).toBeNull();
    await shot('webhook-light');
    const stored = await adminCall('GET', `/application/${APP_ID}/webhook`);
    expect(stored.data).toEqual({
      url: sink.url('/hook'),
      retry_enabled: 1,
      retry_config: { retry_value: 1, max_retries: 3, backoff_type: 'linear', backoff_value: 2 },
      headers: { 'X-Api-Token': 'token-123' },
    });

    // Subscribe from the catalogue, and toggle a flag.
    await page.getByRole('link', { name: 'Subscriptions' }).click();
    await page.getByLabel('Event type').selectOption('acw_start');
    await page.getByRole('button', { name: 'Subscribe' }).click();
    const ensure = page.getByRole('checkbox', { name: 'Ensure delivery of acw_start' });
    await ensure.waitFor();
    await ensure.check();
    await expect
      .poll(async () => (await adminCall('GET', `/application/${APP_ID}/webhook/subscription`)).subscriptions)
      .toEqual({
        acw_start: { ensure_delivery: true, active: true },
      });
    await shot('subscriptions-light');

    // A test event arrives and its delivery turns `succeeded` without a reload.
    await page.getByRole('link', { name: 'Secret and health' }).click();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('link', { name: 'Follow its delivery' }).click();
    await page.locator('.section-head .status', { hasText: 'succeeded' }).waitFor({ timeout: 20_000 });
    expect(sink.received.at(-1)?.headers['x-api-token']).toBe('token-123');
    await page.getByText('Headers sent').click();
    await shot('delivery-succeeded-light');

    // The receiver fails: an acw_start delivery (at least once) is retried per the policy, then fails.
    sinkStatus = 500;
    const published = await adminCall('POST', `/application/${APP_ID}/events`, { event: 'acw_start', payload: { call_id: 'c-1' } });
    const failing = published.data.deliveries[0] as string;
    await page.getByRole('link', { name: 'Deliveries' }).click();
    // It appears in the log without a reload (polling), and becomes `failed` once retries run out.
    const row = page.getByRole('row', { name: new RegExp(failing) });
    await row.waitFor({ timeout: 10_000 });
    await row.getByText('failed', { exact: true }).waitFor({ timeout: 30_000 });
    await shot('deliveries-light');
    await row.getByRole('link').click();
    await page.getByText('HTTP 500').first().waitFor();
    await shot('delivery-failed-light');
    sinkStatus = 200;
    await page.getByRole('button', { name: 'Retry delivery' }).click();
    await page.locator('.section-head .status', { hasText: 'succeeded' }).waitFor({ timeout: 20_000 });

    // The signing secret: reveal, then rotate after confirming.
    await page.getByRole('link', { name: 'Secret and health' }).click();
    const before = (await adminCall('GET', `/application/${APP_ID}/webhook/secret`)).data.secret as string;
    await page.getByRole('button', { name: 'Reveal secret' }).click();
    await page.getByText(before).waitFor();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
    await dialog.waitFor();
    await shot('rotate-confirm-light');
    await dialog.getByRole('button', { name: 'Yes, rotate' }).click();
    await page.getByRole('status').filter({ hasText: 'Rotated.' }).waitFor();
    const after = (await adminCall('GET', `/application/${APP_ID}/webhook/secret`)).data.secret as string;
    expect(after).not.toBe(before);
    await page.getByText(after).waitFor();

    // The rate limit (PRODUCT.md §10): set, stored, then removed again.
    const perSecond = page.getByLabel('Attempts per second');
    await perSecond.fill('20');
    await page.getByRole('button', { name: 'Save rate limit' }).click();
    await page.getByText('At most 20 attempts a second reach the endpoint.').waitFor();
    expect((await adminCall('GET', `/application/${APP_ID}/webhook/throttle`)).data).toEqual({ per_second: 20 });
    await shot('endpoint-light');
    await perSecond.fill('');
    await page.getByRole('button', { name: 'Save rate limit' }).click();
    await page.getByText('No limit: attempts go out as fast as the workers send them.').waitFor();
    expect((await adminCall('GET', `/application/${APP_ID}/webhook/throttle`)).data).toEqual({ per_second: null });

    // Every page, light and dark.
    const pages: [string, string][] = [
      ['applications', '#/'],
      ['webhook', `#/applications/${APP_ID}/webhook`],
      ['subscriptions', `#/applications/${APP_ID}/subscriptions`],
      ['deliveries', `#/applications/${APP_ID}/deliveries`],
      ['delivery', `#/applications/${APP_ID}/deliveries/${failing}`],
      ['events', `#/applications/${APP_ID}/events`],
      ['endpoint', `#/applications/${APP_ID}/endpoint`],
      ['error-codes', '#/error-codes'],
    ];
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [name, hash] of pages) {
        await page.goto(`${base}/console/${hash}`);
        await page.locator('main h1').first().waitFor();
        await page.waitForLoadState('networkidle');
        await shot(`${name}-${scheme}`);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });

    // Sign out forgets the key.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot('sign-in-dark');

    expect(problems).toEqual([]);
    expect(expected).toEqual([]);
  });
  it("shows an account key its own account's applications, each a link by id, and nothing of another account's", async () => {
    const other = await adminCall('POST', '/admin/accounts', { name: 'Other Co' });
    await adminCall('POST', '/admin/applications', { id: 8, name: 'Not yours', account_id: other.data.id });
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const tab = await context.newPage();
    watch(tab);
    try {
      await tab.goto(`${base}/console`);
      await tab.getByLabel('API key').fill(accountKey);
      // How the console tells an account key from an admin key: the admin listing refuses it.
      expected.push('GET /admin/accounts 403');
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByRole('link', { name: new RegExp(`Application ${APP_ID}\\b`) }).waitFor();
      expect(await tab.getByRole('main').getByRole('link').allTextContents()).toEqual([
        'Application 7 Sales US',
        'Application 42 Support EU',
      ]);
      expect(await tab.getByRole('textbox').count()).toBe(0);
      for (const scheme of ['light', 'dark'] as const) {
        await tab.emulateMedia({ colorScheme: scheme });
        await tab.screenshot({ path: path.join(SHOTS, `applications-account-${scheme}.png`), fullPage: true });
      }
      await tab.emulateMedia({ colorScheme: 'light' });
      expected.push('GET /application/7/webhook 404');
      await tab.getByRole('link', { name: /Application 7\b/ }).click();
      await tab.getByLabel('Target URL').waitFor();
      expect(tab.url()).toMatch(/#\/applications\/7\/webhook$/);
    } finally {
      await context.close();
    }
    expect(problems).toEqual([]);
    expect(expected).toEqual([]);
  });
  it('opens a portal link for one application only, keeps the token out of the address bar, and stops when it is revoked', async () => {
    const link = (await adminCall('POST', `/application/${APP_ID}/portal_links`, {})).data as { url: string; token: string };
    expect(link.url).toMatch(/^\/console\/#\/portal\?/);
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const portal = await context.newPage();
    watch(portal);
    try {
      await portal.goto(`${base}${link.url}`);
      await portal.getByLabel('Target URL').waitFor();
      // The token left the address bar (and history) and lives in this tab's sessionStorage only.
      expect(portal.url()).not.toContain('hp_');
      expect(portal.url()).toMatch(new RegExp(`#/applications/${APP_ID}/webhook$`));
      expect(await portal.evaluate(() => sessionStorage.getItem('herald.credential'))).toBe(link.token);
      expect(await portal.getByLabel('Target URL').inputValue()).toBe(sink.url('/hook'));
      // Nothing of the operator's: no application list, no admin views.
      await expect
        .poll(() => portal.getByRole('navigation', { name: 'Main' }).getByRole('link').allTextContents())
        .toEqual([`Application ${APP_ID}`, 'Error codes']);
      await portal.getByRole('link', { name: 'Deliveries' }).click();
      await portal.getByRole('row').nth(1).waitFor();
      await portal.screenshot({ path: path.join(SHOTS, 'portal-deliveries-light.png'), fullPage: true });

      // Another application answers 403-03, shown as such.
      expected.push('GET /application/7/webhook 403');
      await portal.goto(`${base}/console/#/applications/7/webhook`);
      await portal.getByRole('alert').filter({ hasText: '403-03' }).waitFor();

      // Revoked: the next request is refused.
      await adminCall('DELETE', `/application/${APP_ID}/portal_links`);
      expected.push(`GET /application/${APP_ID}/webhook 403`);
      await portal.goto(`${base}/console/#/applications/${APP_ID}/webhook`);
      await portal.reload(); // a fresh page, not the answers cached before the revocation
      await portal.getByRole('alert').filter({ hasText: '403-02' }).waitFor();
      await portal.screenshot({ path: path.join(SHOTS, 'portal-revoked-light.png'), fullPage: true });
    } finally {
      await context.close();
    }
    expect(problems).toEqual([]);
    expect(expected).toEqual([]);
  });
  it('shows the first screen of a delivery log of 100,000 deliveries (measured, not asserted)', async () => {
    // A disabled endpoint keeps its deliveries paused: the log fills without the worker sending them.
    const account = (await adminCall('GET', '/admin/accounts')).data[0].id as string;
    await adminCall('POST', '/admin/applications', { id: 9, name: 'Big log', account_id: account });
    await adminCall('PUT', '/application/9/webhook', { url: sink.url('/big'), retry_enabled: 0 });
    await adminCall('PUT', '/application/9/webhook/subscription/acw_start', {});
    await adminCall('POST', '/application/9/webhook/disable');
    const seeded = Date.now();
    for (let batch = 0; batch < 100; batch++) {
      const events = Array.from({ length: 1000 }, (_, i) => ({ event: 'acw_start', payload: { n: batch * 1000 + i } }));
      await adminCall('POST', '/application/9/events/batch', { events });
    }
    const seedMs = Date.now() - seeded;
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    await context.addInitScript((key) => sessionStorage.setItem('herald.credential', key), ADMIN_KEY);
    const big = await context.newPage();
    watch(big);
    try {
      await big.goto(`${base}/console/#/applications/9/deliveries`);
      await big.getByRole('row').nth(25).waitFor();
      const usableMs = await big.evaluate(() => Math.round(performance.now()));
      console.log(`console: first screen of a 100,000-delivery log usable after ${usableMs} ms (seeding took ${seedMs} ms)`);
      await big.screenshot({ path: path.join(SHOTS, 'big-log-light.png') });
      // The header row and the first page of 25 (at least: a taller window may already have asked for more).
      expect(await big.getByRole('row').count()).toBeGreaterThanOrEqual(26);
      // More on scroll: the next page arrives when the end of the list comes into view.
      await big.getByRole('row').nth(25).scrollIntoViewIfNeeded();
      await big.mouse.wheel(0, 4000);
      await big.getByRole('row').nth(50).waitFor();
    } finally {
      await context.close();
    }
    expect(problems).toEqual([]);
  });
});
