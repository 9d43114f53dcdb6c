import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cloneDatabase, testServerUrl, testTemplateDatabase } from '@herald/database/dist/testing';
import { freePort, runCli, startCli, waitForOk } from './support/run-cli';

const ADMIN_KEY = 'cli-test-admin-key-0123456789';

async function post(base: string, path: string, body: object): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: ADMIN_KEY, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe('herald start', () => {
  it('runs on the embedded database when DATABASE_URL is unset, keeping data across restarts', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'herald-start-'));
    const port = await freePort();
    const env = { PORT: String(port), HERALD_DATA_DIR: dataDir, HERALD_ADMIN_KEY: ADMIN_KEY, HERALD_LOG_LEVEL: 'warn' };
    const base = `http://127.0.0.1:${port}`;
    try {
      const first = startCli(['start'], env);
      await waitForOk(`${base}/readyz`, 60_000, first);
      expect(first.output()).toMatch(/embedded PostgreSQL \(PGlite\)/);
      const account = await post(base, '/admin/accounts', { name: 'Persistent' });
      expect(account.status).toBe(201);
      const stopped = await first.stop();
      expect(stopped.code).toBe(0);
      expect(stopped.ms).toBeLessThan(30_000);

      const second = startCli(['start'], env);
      await waitForOk(`${base}/readyz`, 60_000, second);
      expect(second.output()).toMatch(/schema is up to date/);
      const application = await post(base, '/admin/applications', { id: 7, name: 'Kept', account_id: account.body.data.id });
      expect(application.status).toBe(201);
      expect((await second.stop()).code).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('uses the PostgreSQL server in DATABASE_URL, and the admin commands reach it', async () => {
    const db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    const port = await freePort();
    const env = { PORT: String(port), DATABASE_URL: db.url, HERALD_ADMIN_KEY: ADMIN_KEY, HERALD_LOG_LEVEL: 'warn' };
    const running = startCli(['start'], env);
    try {
      await waitForOk(`http://127.0.0.1:${port}/readyz`, 60_000, running);
      expect(running.output()).toMatch(/PostgreSQL server in DATABASE_URL/);
      const created = await runCli(['accounts', 'create', '--name', 'From the cli'], env);
      expect(created.code).toBe(0);
      expect(JSON.parse(created.stdout)).toEqual({ success: true, data: { id: expect.stringMatching(/^acc_/), name: 'From the cli' } });
      const refused = await runCli(['applications', 'create', '--name', 'x', '--account', 'acc_00000000000000000000000000'], env);
      expect(refused.code).toBe(1);
      expect(JSON.parse(refused.stderr).error.code).toBe('404-06');
    } finally {
      expect((await running.stop()).code).toBe(0);
      await db.drop();
    }
  });

  it('stops before starting anything when a variable is invalid, naming it', async () => {
    const result = await runCli(['start'], { PORT: 'eighty', HERALD_LOG_LEVEL: 'chatty' }, 15_000);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/PORT: must be an integer/);
    expect(result.stderr).toMatch(/HERALD_LOG_LEVEL: must be one of/);
  });

  it('prints its usage for no command and refuses unknown ones', async () => {
    expect((await runCli([], {})).stdout).toMatch(/herald <command>/);
    const unknown = await runCli(['frobnicate'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
  });
});
