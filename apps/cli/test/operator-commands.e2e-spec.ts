import { HERALD_VERSION } from '@herald/core';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cloneDatabase, TestDatabase, testServerUrl, testTemplateDatabase } from '@herald/database/testing';
import { Sink } from '@herald/testing';
import { readItem, readTable } from './support/output';
import { waitUntil } from './support/processes';
import { callApi, Finished, freePort, runCli, Running, startCli, waitForOk } from './support/run-cli';

const ADMIN_KEY = 'cli-operator-admin-key-0123456789';

/** Every command and subcommand, as an operator types it before --help. */
const COMMANDS = [
  [],
  ['start'],
  ['migrate'],
  ['migration'],
  ['migration', 'new'],
  ['accounts'],
  ['accounts', 'list'],
  ['accounts', 'get'],
  ['accounts', 'create'],
  ['applications'],
  ['applications', 'list'],
  ['applications', 'get'],
  ['applications', 'create'],
  ['keys'],
  ['keys', 'list'],
  ['keys', 'get'],
  ['keys', 'create'],
  ['keys', 'revoke'],
  ['api-keys', 'list'],
  ['event-types'],
  ['event-types', 'list'],
  ['event-types', 'get'],
  ['event-types', 'create'],
  ['event-types', 'update'],
  ['webhook'],
  ['webhook', 'get'],
  ['webhook', 'status'],
  ['webhook', 'disable'],
  ['webhook', 'enable'],
  ['events'],
  ['events', 'publish'],
  ['events', 'list'],
  ['events', 'get'],
  ['events', 'replay'],
  ['deliveries'],
  ['deliveries', 'list'],
  ['deliveries', 'get'],
  ['deliveries', 'retry'],
  ['deliveries', 'recover'],
  ['subscriptions'],
  ['subscriptions', 'filter'],
  ['subscriptions', 'filter', 'get'],
  ['subscriptions', 'filter', 'set'],
  ['subscriptions', 'filter', 'test'],
  ['subscriptions', 'filter', 'remove'],
  ['audit'],
  ['audit', 'list'],
];
const API_COMMANDS = COMMANDS.filter(
  (words) => (words.length === 2 && !['migration', 'subscriptions'].includes(words[0])) || words.length === 3,
);

/** PRODUCT.md §9 and §6: the operator's cli, as a process against the running api and worker. */
describe('herald operator commands', () => {
  let db: TestDatabase;
  let running: Running;
  let env: NodeJS.ProcessEnv;
  let base: string;
  const herald = (...args: string[]) => runCli(args, env);
  const api = (method: string, path: string, body?: object, key = ADMIN_KEY) => callApi(base, method, path, body, key);

  /** A command that worked: exit 0, and nothing on stderr but the hints a person reads. */
  async function succeeds(...args: string[]): Promise<Finished> {
    const result = await herald(...args);
    if (result.code !== 0) throw new Error(`herald ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
    return result;
  }
  /** With --json: stdout is exactly one JSON document, and stderr is empty. */
  async function json(...args: string[]): Promise<any> {
    const result = await succeeds(...args, '--json');
    expect(result.stderr).toBe('');
    return JSON.parse(result.stdout);
  }
  /** A refusal: the exit code, nothing on stdout, one line on stderr, no stack trace. */
  async function fails(code: number, ...args: string[]): Promise<string> {
    const result = await herald(...args);
    expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code, stdout: '' });
    expect(result.stderr).toMatch(/^herald: [^\n]+\n$/);
    expect(result.stderr).not.toMatch(/\bat .+:\d+:\d+/);
    return result.stderr.trim();
  }

  beforeAll(async () => {
    db = await cloneDatabase(testServerUrl(), testTemplateDatabase());
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    env = {
      PORT: String(port),
      HERALD_WORKER_METRICS_PORT: String(await freePort()),
      DATABASE_URL: db.url,
      HERALD_ADMIN_KEY: ADMIN_KEY,
      HERALD_LOG_LEVEL: 'warn',
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
    };
    running = startCli(['start'], env);
    await waitForOk(`${base}/readyz`, 60_000, running);
  });
  afterAll(async () => {
    const stopped = await running?.stop();
    await db?.drop();
    expect(stopped?.code).toBe(0);
  });

  describe('--version and --help', () => {
    it("--version and -V print Herald's version and nothing else", async () => {
      for (const flag of ['--version', '-V']) {
        const result = await succeeds(flag);
        expect(result.stdout).toBe(`${HERALD_VERSION}\n`);
        expect(result.stderr).toBe('');
      }
    });

    it('--help on herald lists every command and the exit codes', async () => {
      const { stdout, stderr } = await succeeds('--help');
      expect(stderr).toBe('');
      expect(stdout).toMatch(/^Usage: herald /);
      for (const command of [
        'start',
        'migrate',
        'migration',
        'accounts',
        'applications',
        'keys|api-keys',
        'event-types',
        'webhook',
        'events',
        'deliveries',
        'subscriptions',
      ]) {
        expect(stdout).toMatch(new RegExp(`^  ${command.replace('|', '\\|')}\\b`, 'm'));
      }
      expect(stdout).toContain('--json');
      expect(stdout).toMatch(/^ {2}0 {2}success$/m);
      expect(stdout).toMatch(/^ {2}1 {2}the api answered with an error/m);
      expect(stdout).toMatch(/^ {2}2 {2}usage error/m);
      expect(stdout).toMatch(/^ {2}3 {2}the api could not be reached/m);
    });

    it.each(COMMANDS.slice(1).map((words) => [words.join(' '), words]))('herald %s --help', async (_, words) => {
      const { stdout, stderr } = await succeeds(...words, '--help');
      expect(stderr).toBe('');
      const [first] = stdout.split('\n');
      expect(first).toMatch(/^Usage: herald /);
      expect(first).toContain(` ${words[words.length - 1]}`);
      if (API_COMMANDS.some((command) => command.join(' ') === words.join(' '))) {
        for (const option of ['--url <url>', '--key <key>', '--json']) expect(stdout).toContain(option);
        expect(stdout).toContain('Exit codes:');
      }
    });

    it('herald help <command> is --help', async () => {
      const viaHelp = await succeeds('help', 'deliveries');
      expect(viaHelp.stdout).toBe((await succeeds('deliveries', '--help')).stdout);
      expect(viaHelp.stdout).toMatch(/recover/);
    });
  });

  describe('accounts, applications, keys and event types', () => {
    let accountId: string;

    it('accounts create, with and without --json', async () => {
      const created = await succeeds('accounts', 'create', '--name', 'Acme Contact Center');
      expect(created.stderr).toBe('');
      expect(readItem(created.stdout)).toEqual({ id: expect.stringMatching(/^acc_[0-9a-z]{26}$/), name: 'Acme Contact Center' });
      const second = await json('accounts', 'create', '--name', 'Beta');
      expect(second).toEqual({ id: expect.stringMatching(/^acc_/), name: 'Beta' });
      accountId = second.id;
    });

    it('accounts list: a table, or {data, next_cursor}; the next page on stderr', async () => {
      const table = await succeeds('accounts', 'list');
      expect(table.stderr).toBe('');
      const { header, rows } = readTable(table.stdout);
      expect(header).toEqual(['ID', 'NAME']);
      expect(rows).toEqual([
        { ID: accountId, NAME: 'Beta' },
        { ID: expect.stringMatching(/^acc_/), NAME: 'Acme Contact Center' },
      ]);

      const everything = await json('accounts', 'list');
      expect(everything).toEqual({
        data: [
          { id: accountId, name: 'Beta' },
          { id: rows[1].ID, name: 'Acme Contact Center' },
        ],
        next_cursor: null,
      });

      const first = await succeeds('accounts', 'list', '--limit', '1');
      expect(readTable(first.stdout).rows).toEqual([{ ID: accountId, NAME: 'Beta' }]);
      expect(first.stderr).toBe(`herald: more accounts on the next page: --cursor ${accountId}\n`);
      const page = await json('accounts', 'list', '--limit', '1');
      expect(page).toEqual({ data: [{ id: accountId, name: 'Beta' }], next_cursor: accountId });
      const next = await json('accounts', 'list', '--limit', '1', '--cursor', page.next_cursor);
      // The last page says so: no cursor, and no hint.
      expect(next).toEqual({ data: [{ id: rows[1].ID, name: 'Acme Contact Center' }], next_cursor: null });
      const last = await succeeds('accounts', 'list', '--limit', '1', '--cursor', page.next_cursor);
      expect(last.stderr).toBe('');
      const empty = await succeeds('accounts', 'list', '--cursor', rows[1].ID);
      expect(empty.stdout).toBe('');
      expect(empty.stderr).toBe('herald: no accounts\n');
    });

    it('accounts get, with and without --json', async () => {
      expect(readItem((await succeeds('accounts', 'get', accountId)).stdout)).toEqual({ id: accountId, name: 'Beta' });
      expect(await json('accounts', 'get', accountId)).toEqual({ id: accountId, name: 'Beta' });
    });

    it('applications create (with the platform id or the next free one), list and get', async () => {
      const chosen = await succeeds('applications', 'create', '--account', accountId, '--name', 'Support EU', '--id', '42');
      expect(readItem(chosen.stdout)).toEqual({ id: '42', name: 'Support EU', account_id: accountId });
      expect(await json('applications', 'create', '--account', accountId, '--name', 'Next')).toEqual({
        id: 43,
        name: 'Next',
        account_id: accountId,
      });
      const other = await json('accounts', 'create', '--name', 'Other');
      await json('applications', 'create', '--account', other.id, '--name', 'Elsewhere', '--id', '7');

      const all = readTable((await succeeds('applications', 'list')).stdout);
      expect(all.header).toEqual(['ID', 'NAME', 'ACCOUNT']);
      expect(all.rows).toEqual([
        { ID: '7', NAME: 'Elsewhere', ACCOUNT: other.id },
        { ID: '42', NAME: 'Support EU', ACCOUNT: accountId },
        { ID: '43', NAME: 'Next', ACCOUNT: accountId },
      ]);
      expect(await json('applications', 'list', '--account', accountId)).toEqual({
        data: [
          { id: 42, name: 'Support EU', account_id: accountId },
          { id: 43, name: 'Next', account_id: accountId },
        ],
        next_cursor: null,
      });
      expect(readItem((await succeeds('applications', 'get', '43')).stdout)).toEqual({ id: '43', name: 'Next', account_id: accountId });
      expect(await json('applications', 'get', '42')).toEqual({ id: 42, name: 'Support EU', account_id: accountId });
    });

    it('keys create shows the key once; list, get and revoke never show it; api-keys is the same command', async () => {
      const created = await succeeds('keys', 'create', '--account', accountId, '--name', 'production');
      const shown = readItem(created.stdout);
      expect(shown).toEqual({
        id: expect.stringMatching(/^key_/),
        name: 'production',
        prefix: expect.stringMatching(/^hk_/),
        account_id: accountId,
        scope: 'account',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        revoked_at: '-',
        key: expect.stringMatching(/^hk_[A-Za-z0-9_-]{43}$/),
      });
      expect(created.stderr).toBe('herald: the key is shown only now: Herald keeps only its hash\n');
      const second = await json('api-keys', 'create', '--account', accountId, '--name', 'staging');
      expect(second).toEqual(expect.objectContaining({ name: 'staging', key: expect.stringMatching(/^hk_/), revoked_at: null }));

      const table = await succeeds('keys', 'list', '--account', accountId);
      const { header, rows } = readTable(table.stdout);
      expect(header).toEqual(['ID', 'NAME', 'PREFIX', 'SCOPE', 'ACCOUNT', 'CREATED', 'REVOKED']);
      expect(rows.map((row) => [row.ID, row.NAME, row.SCOPE, row.REVOKED])).toEqual([
        [second.id, 'staging', 'account', '-'],
        [shown.id, 'production', 'account', '-'],
      ]);
      const listed = await json('api-keys', 'list', '--account', accountId);
      expect(listed.data.map((key: any) => key.id)).toEqual([second.id, shown.id]);
      expect(JSON.stringify(listed) + table.stdout).not.toContain(shown.key);
      expect(listed.data[0]).not.toHaveProperty('key');
      expect((await json('keys', 'list')).data.map((key: any) => key.id)).toContain('key_bootstrap_admin');

      const read = readItem((await succeeds('keys', 'get', shown.id)).stdout);
      expect(read).toEqual({ ...shown, key: undefined });
      expect(await json('keys', 'get', second.id)).toEqual({ ...second, key: undefined });

      const revoked = readItem((await succeeds('keys', 'revoke', shown.id)).stdout);
      expect(revoked).toEqual({ ...read, revoked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
      const revokedJson = await json('api-keys', 'revoke', second.id);
      expect(revokedJson).toEqual({ ...second, key: undefined, revoked_at: expect.any(String) });
      // Refused at once: the revoked key is an api error for the cli too.
      expect(await fails(1, 'accounts', 'list', '--key', shown.key)).toMatch(/^herald: 403-02 /);
    });

    it('event-types create and list, with and without --json', async () => {
      const created = await succeeds('event-types', 'create', '--name', 'queue.overflow', '--description', 'A queue overflowed.');
      expect(readItem(created.stdout)).toEqual({
        name: 'queue.overflow',
        description: 'A queue overflowed.',
        schema: '-',
        enforce: 'false',
        example: '-',
      });
      const noSchema = { schema: null, enforce: false, example: null };
      expect(await json('event-types', 'create', '--name', 'agent.idle')).toEqual({ name: 'agent.idle', description: '', ...noSchema });
      const table = readTable((await succeeds('event-types', 'list', '--limit', '100')).stdout);
      expect(table.header).toEqual(['NAME', 'DESCRIPTION', 'ENFORCED']);
      expect(table.rows).toContainEqual({ NAME: 'queue.overflow', DESCRIPTION: 'A queue overflowed.', ENFORCED: 'false' });
      expect(table.rows).toContainEqual({ NAME: 'agent.idle', DESCRIPTION: '-', ENFORCED: 'false' });
      const listed = await json('event-types', 'list', '--limit', '100');
      expect(listed.data).toContainEqual({ name: 'queue.overflow', description: 'A queue overflowed.', ...noSchema });
      expect(listed.next_cursor).toBeNull();
    });

    it('event-types create and update take a schema and an example from files, --enforce and --no-enforce (PRODUCT.md §15)', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'herald-cli-schema-'));
      const schemaFile = join(dir, 'schema.json');
      const exampleFile = join(dir, 'example.json');
      const schema = { type: 'object', required: ['agent_id'], properties: { agent_id: { type: 'string' } } };
      writeFileSync(schemaFile, JSON.stringify(schema, null, 2));
      writeFileSync(exampleFile, '{"agent_id":"a-17"}');

      const created = await json('event-types', 'create', '--name', 'agent.paused', '--schema', schemaFile, '--example', exampleFile);
      expect(created).toEqual({ name: 'agent.paused', description: '', schema, enforce: false, example: { agent_id: 'a-17' } });
      const enforced = await json('event-types', 'update', 'agent.paused', '--enforce', '--description', 'An agent paused.');
      expect(enforced).toEqual({ ...created, description: 'An agent paused.', enforce: true });
      expect(await json('event-types', 'get', 'agent.paused')).toEqual(enforced);
      expect(readItem((await succeeds('event-types', 'get', 'agent.paused')).stdout)).toMatchObject({
        enforce: 'true',
        'schema.properties.agent_id.type': 'string',
        'example.agent_id': 'a-17',
      });

      // The api judges the schema: a refusal is exit 1 with its code; a file that is not JSON never leaves the cli (exit 2).
      writeFileSync(schemaFile, '{"type":"object","required":["call_id"]}');
      expect(await fails(1, 'event-types', 'update', 'agent.paused', '--schema', schemaFile)).toMatch(/^herald: 400-02 example\/call_id: /);
      writeFileSync(schemaFile, 'not json');
      expect(await fails(2, 'event-types', 'update', 'agent.paused', '--schema', schemaFile)).toMatch(/is not JSON/);
      expect(await fails(1, 'event-types', 'update', 'no.such.type', '--no-enforce')).toMatch(/^herald: 404-08 /);

      const removed = await json('event-types', 'update', 'agent.paused', '--no-schema', '--no-example', '--no-enforce');
      expect(removed).toEqual({ ...enforced, schema: null, example: null, enforce: false });
    });
  });

  describe('an application: its webhook and its deliveries', () => {
    const APP = 77;
    let sink: Sink;
    let tenantKey: string;
    let failedId: string;

    const status = async (id: string) => (await api('GET', `/application/${APP}/deliveries/${id}`)).body.data.status;
    const publish = async (event = 'acw_start') => {
      const published = await api('POST', `/application/${APP}/events`, { event, payload: { call: 'c-1' } });
      expect(published.status).toBe(202);
      return published.body.data.deliveries[0] as string;
    };
    const settled = (id: string, wanted: string) => waitUntil(async () => (await status(id)) === wanted, 20_000, `${id} to be ${wanted}`);

    beforeAll(async () => {
      sink = await new Sink(() => ({ status: 500 })).start();
      const account = (await api('POST', '/admin/accounts', { name: 'Deliveries' })).body.data.id;
      expect((await api('POST', '/admin/applications', { id: APP, name: 'Deliveries', account_id: account })).status).toBe(201);
      tenantKey = (await api('POST', '/admin/api_keys', { account_id: account, name: 'tenant' })).body.data.key;
      const webhook = { url: sink.url(), retry_enabled: 0, headers: { 'X-Api-Token': 'secret-token' } };
      expect((await api('PUT', `/application/${APP}/webhook`, webhook)).status).toBe(200);
      for (const event of ['acw_start', 'voice_campaign_activate']) {
        expect((await api('PUT', `/application/${APP}/webhook/subscription/${event}`, { ensure_delivery: true })).status).toBe(200);
      }
      // One attempt (retries off), answered 500: a failed delivery.
      failedId = await publish();
      await settled(failedId, 'failed');
    });
    afterAll(() => sink?.close());

    it('webhook get, with and without --json, with an admin key or the account key', async () => {
      const shown = readItem((await succeeds('webhook', 'get', '--application', String(APP))).stdout);
      expect(shown).toEqual({
        url: sink.url(),
        retry_enabled: '0',
        'retry_config.retry_value': expect.any(String),
        'retry_config.max_retries': expect.any(String),
        'retry_config.backoff_type': expect.any(String),
        'retry_config.backoff_value': expect.any(String),
        'headers.X-Api-Token': 'secret-token',
      });
      const read = await json('webhook', 'get', '--application', String(APP), '--key', tenantKey);
      expect(read).toEqual((await api('GET', `/application/${APP}/webhook`)).body.data);
      expect(read.url).toBe(sink.url());
    });

    it('deliveries list --status failed, with and without --json, filtered by event, with the account key', async () => {
      const { header, rows } = readTable((await succeeds('deliveries', 'list', '--application', String(APP), '--status', 'failed')).stdout);
      expect(header).toEqual(['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'CREATED', 'NEXT ATTEMPT']);
      expect(rows).toEqual([
        {
          ID: failedId,
          EVENT: 'acw_start',
          STATUS: 'failed',
          ATTEMPTS: '1',
          CREATED: expect.stringMatching(/^\d{4}-/),
          'NEXT ATTEMPT': '-',
        },
      ]);
      const listed = await json('deliveries', 'list', '--application', String(APP), '--status', 'failed', '--key', tenantKey);
      expect(listed).toEqual({
        data: [expect.objectContaining({ id: failedId, event: 'acw_start', status: 'failed', attempt_count: 1, next_attempt_at: null })],
        next_cursor: null,
      });
      expect(await json('deliveries', 'list', '--application', String(APP), '--status', 'succeeded')).toEqual({
        data: [],
        next_cursor: null,
      });
      const none = await succeeds('deliveries', 'list', '--application', String(APP), '--event', 'voice_campaign_activate');
      expect(none).toEqual({ code: 0, stdout: '', stderr: 'herald: no deliveries\n' });
      expect((await json('deliveries', 'list', '--application', String(APP), '--event', 'acw_start', '--limit', '5')).data).toHaveLength(1);
    });

    it('deliveries get shows the delivery and a table of its attempts; --json the whole record', async () => {
      const shown = await succeeds('deliveries', 'get', failedId, '--application', String(APP));
      expect(readItem(shown.stdout)).toEqual(
        expect.objectContaining({ id: failedId, event: 'acw_start', status: 'failed', attempt_count: '1' }),
      );
      const attempts = readTable(shown.stdout.split('\nattempts:\n')[1]);
      expect(attempts.header).toEqual(['#', 'STARTED', 'MS', 'STATUS', 'ERROR', 'NEXT ATTEMPT', 'URL']);
      expect(attempts.rows).toEqual([expect.objectContaining({ '#': '1', STATUS: '500', ERROR: '-', URL: sink.url() })]);
      const read = await json('deliveries', 'get', failedId, '--application', String(APP));
      expect(read).toEqual(
        expect.objectContaining({
          id: failedId,
          status: 'failed',
          attempts: [expect.objectContaining({ number: 1, response_status: 500 })],
        }),
      );
    });

    it('deliveries retry gives a failed delivery one more attempt now', async () => {
      sink.respond(() => ({ status: 200 }));
      const retried = readItem((await succeeds('deliveries', 'retry', failedId, '--application', String(APP))).stdout);
      expect(retried).toEqual(expect.objectContaining({ id: failedId, status: 'pending' }));
      await settled(failedId, 'succeeded');
      const again = await json('deliveries', 'retry', failedId, '--application', String(APP), '--key', tenantKey);
      expect(again).toEqual(expect.objectContaining({ id: failedId, status: 'pending' }));
      await settled(failedId, 'succeeded');
      const read = await json('deliveries', 'get', failedId, '--application', String(APP));
      expect(read.attempts.map((attempt: any) => attempt.response_status)).toEqual([500, 200, 200]);
    });

    it('deliveries recover requeues the failed deliveries created since a time, once each', async () => {
      sink.respond(() => ({ status: 500 }));
      const since = new Date(Date.now() - 1_000).toISOString();
      const failed = [await publish(), await publish('voice_campaign_activate')];
      for (const id of failed) await settled(id, 'failed');
      const before = sink.received.length;
      sink.respond(() => ({ status: 200 }));

      expect(
        await json('deliveries', 'recover', '--application', String(APP), '--since', since, '--event', 'voice_campaign_activate'),
      ).toEqual({
        requeued: 1,
      });
      await settled(failed[1], 'succeeded');
      const recovered = await succeeds(
        'deliveries',
        'recover',
        '--application',
        String(APP),
        '--since',
        since,
        '--until',
        new Date().toISOString(),
      );
      expect(readItem(recovered.stdout)).toEqual({ requeued: '1' });
      await settled(failed[0], 'succeeded');
      expect(sink.received.length).toBe(before + 2);
      // Nothing failed is left: a second recover requeues nothing.
      expect(await json('deliveries', 'recover', '--application', String(APP), '--since', since, '--key', tenantKey)).toEqual({
        requeued: 0,
      });
    });
  });

  describe('an application: its webhook’s health and its events', () => {
    const APP = 78;
    let sink: Sink;

    beforeAll(async () => {
      sink = await new Sink(() => ({ status: 200 })).start();
      const account = (await api('POST', '/admin/accounts', { name: 'Events' })).body.data.id;
      expect((await api('POST', '/admin/applications', { id: APP, name: 'Events', account_id: account })).status).toBe(201);
      expect((await api('PUT', `/application/${APP}/webhook`, { url: sink.url(), retry_enabled: 0 })).status).toBe(200);
      expect((await api('PUT', `/application/${APP}/webhook/subscription/acw_start`, {})).status).toBe(200);
    });
    afterAll(() => sink?.close());

    it('webhook status, disable and enable; a delivery published while disabled waits, then arrives', async () => {
      expect(readItem((await succeeds('webhook', 'status', '--application', String(APP))).stdout)).toMatchObject({
        state: 'active',
        consecutive_failures: '0',
      });
      expect(await json('webhook', 'disable', '--application', String(APP))).toMatchObject({
        state: 'disabled',
        disabled_reason: 'manual',
      });
      const published = await api('POST', `/application/${APP}/events`, { event: 'acw_start', payload: { n: 1 } });
      const id = published.body.data.deliveries[0];
      expect((await api('GET', `/application/${APP}/deliveries/${id}`)).body.data.status).toBe('paused');
      expect(readItem((await succeeds('webhook', 'enable', '--application', String(APP))).stdout)).toMatchObject({ state: 'active' });
      await waitUntil(
        async () => (await api('GET', `/application/${APP}/deliveries/${id}`)).body.data.status === 'succeeded',
        20_000,
        'the delivery',
      );
    });

    it('events list, get and replay, with and without --json', async () => {
      const published = (await api('POST', `/application/${APP}/events`, { event: 'acw_start', payload: { call: 'c-9' } })).body.data;
      const { header, rows } = readTable((await succeeds('events', 'list', '--application', String(APP), '--limit', '1')).stdout);
      expect(header).toEqual(['ID', 'EVENT', 'CREATED', 'IDEMPOTENCY KEY', 'ORDERING KEY', 'DELIVERIES']);
      expect(rows).toEqual([
        {
          ID: published.id,
          EVENT: 'acw_start',
          CREATED: expect.any(String),
          'IDEMPOTENCY KEY': '-',
          'ORDERING KEY': '-',
          DELIVERIES: published.deliveries[0],
        },
      ]);
      const listed = await json('events', 'list', '--application', String(APP), '--event', 'acw_start');
      expect(listed.data[0]).toMatchObject({ id: published.id, deliveries: published.deliveries });
      expect(await json('events', 'get', published.id, '--application', String(APP))).toMatchObject({ payload: { call: 'c-9' } });
      expect(readItem((await succeeds('events', 'get', published.id, '--application', String(APP))).stdout)).toMatchObject({
        id: published.id,
        'payload.call': 'c-9',
      });
      const received = sink.received.length;
      const replayed = await json('events', 'replay', published.id, '--application', String(APP));
      expect(replayed).toEqual({ id: published.id, event: 'acw_start', deliveries: [expect.stringMatching(/^dlv_/)] });
      await sink.waitFor(received + 1, 20_000);
    });

    it('publishes with a payload, an idempotency key and an ordering key, and refuses a payload that is not a JSON object', async () => {
      const published = await json(
        'events',
        'publish',
        'acw_start',
        '--application',
        String(APP),
        '--payload',
        '{"call":"c-77"}',
        '--idempotency-key',
        'cli-once',
        '--ordering-key',
        'call-c-77',
      );
      expect(published).toEqual({ id: expect.stringMatching(/^evt_/), event: 'acw_start', deliveries: [expect.stringMatching(/^dlv_/)] });
      const stored = (await api('GET', `/application/${APP}/events/${published.id}`)).body.data;
      expect(stored).toMatchObject({ payload: { call: 'c-77' }, idempotency_key: 'cli-once', ordering_key: 'call-c-77' });
      // The same request again: the same event.
      expect(
        (
          await json(
            'events',
            'publish',
            'acw_start',
            '--application',
            String(APP),
            '--payload',
            '{"call":"c-77"}',
            '--idempotency-key',
            'cli-once',
            '--ordering-key',
            'call-c-77',
          )
        ).id,
      ).toBe(published.id);
      expect(await fails(2, 'events', 'publish', 'acw_start', '--application', String(APP), '--payload', '[1]')).toMatch(
        /^herald: .*--payload must hold a JSON object/,
      );
      expect(await fails(1, 'events', 'publish', 'acw_start', '--application', String(APP), '--ordering-key', 'x'.repeat(256))).toMatch(
        /^herald: 400-02 /,
      );
    });

    it('subscriptions filter get, set, test and remove, inline or from a file (PRODUCT.md §14)', async () => {
      const app = ['--application', String(APP)];
      for (const n of [1, 2, 3]) await api('POST', `/application/${APP}/events`, { event: 'acw_start', payload: { n } });
      expect(await json('subscriptions', 'filter', 'get', 'acw_start', ...app)).toEqual({ event: 'acw_start', filter: null });

      const file = join(mkdtempSync(join(tmpdir(), 'herald-cli-filter-')), 'filter.json');
      writeFileSync(file, '{"n": {"$gte": 2}}');
      const tried = await json('subscriptions', 'filter', 'test', 'acw_start', file, '--limit', '3', ...app);
      expect(tried).toEqual({ tested: 3, matched: 2, matched_ids: [expect.stringMatching(/^evt_/), expect.stringMatching(/^evt_/)] });
      expect(await json('subscriptions', 'filter', 'get', 'acw_start', ...app)).toEqual({ event: 'acw_start', filter: null });

      expect(await json('subscriptions', 'filter', 'set', 'acw_start', '{"n": {"$gte": 2}}', ...app)).toEqual({
        event: 'acw_start',
        filter: { n: { $gte: 2 } },
      });
      expect(readItem((await succeeds('subscriptions', 'filter', 'get', 'acw_start', ...app)).stdout)).toMatchObject({
        event: 'acw_start',
        'filter.n.$gte': '2',
      });
      expect(await json('subscriptions', 'filter', 'test', 'acw_start', '--limit', '3', ...app)).toMatchObject({ tested: 3, matched: 2 });
      const filtered = await api('POST', `/application/${APP}/events`, { event: 'acw_start', payload: { n: 1 } });
      expect(filtered.body.data.deliveries).toEqual([]);

      // The api judges the filter (exit 1, naming the place); text that is not JSON never leaves the cli (exit 2).
      expect(await fails(1, 'subscriptions', 'filter', 'set', 'acw_start', '{"n": {"$regex": "^1"}}', ...app)).toMatch(
        /^herald: 400-02 filter\.n\.\$regex /,
      );
      expect(await fails(2, 'subscriptions', 'filter', 'set', 'acw_start', '{nope', ...app)).toMatch(/not JSON/);
      expect(await fails(1, 'subscriptions', 'filter', 'get', 'voice_campaign_activate', ...app)).toMatch(/^herald: 404-03 /);

      expect(await json('subscriptions', 'filter', 'remove', 'acw_start', ...app)).toEqual({ event: 'acw_start', filter: null });
    });
  });

  describe('the audit log (PRODUCT.md §16)', () => {
    const APP = 79;

    it('audit list: one application’s records with its account’s key, or every one with the admin key, filtered', async () => {
      const account = (await api('POST', '/admin/accounts', { name: 'Audited' })).body.data.id as string;
      expect((await api('POST', '/admin/applications', { id: APP, name: 'Audited', account_id: account })).status).toBe(201);
      expect((await api('PUT', `/application/${APP}/webhook`, { url: 'http://127.0.0.1:9/hook', retry_enabled: 0 })).status).toBe(200);
      expect((await api('PUT', `/application/${APP}/webhook/throttle`, { per_second: 5, max_in_flight: 3 })).status).toBe(200);
      const accountKey = (await api('POST', '/admin/api_keys', { account_id: account, name: 'audit reader' })).body.data.key as string;

      const { header, rows } = readTable((await succeeds('audit', 'list', '--application', String(APP), '--key', accountKey)).stdout);
      expect(header).toEqual(['ID', 'AT', 'ACTION', 'ACTOR', 'ACCOUNT', 'APPLICATION', 'CHANGED']);
      expect(rows.map((row) => [row.ACTION, row.APPLICATION, row.CHANGED])).toEqual([
        ['webhook.throttle_updated', String(APP), 'per_second, max_in_flight'],
        ['webhook.created', String(APP), expect.stringContaining('url')],
        ['application.created', String(APP), 'id, name, account_id'],
      ]);
      expect(rows[0].ACTOR).toMatch(/^admin_key /);

      const filtered = await json('audit', 'list', '--account', account, '--action', 'webhook.throttle_updated');
      expect(filtered.data).toEqual([
        expect.objectContaining({
          action: 'webhook.throttle_updated',
          application_id: APP,
          changes: { per_second: [null, 5], max_in_flight: [null, 3] },
        }),
      ]);
      // The whole log is the admin's: an account's key is refused there.
      expect(await fails(1, 'audit', 'list', '--account', account, '--key', accountKey)).toMatch(/^herald: 403-/);
    });
  });

  describe('exit codes', () => {
    it('1 when the api answers an error: "herald: <code> <message>" on one line, with or without --json', async () => {
      expect(await fails(1, 'accounts', 'get', 'acc_00000000000000000000000000')).toBe(
        'herald: 404-06 Account "acc_00000000000000000000000000" does not exist.',
      );
      expect(await fails(1, 'applications', 'get', '999999', '--json')).toMatch(/^herald: 404-01 /);
      expect(await fails(1, 'keys', 'revoke', 'key_nope')).toMatch(/^herald: 404-06 /);
      expect(await fails(1, 'applications', 'create', '--account', 'acc_00000000000000000000000000', '--name', 'x')).toMatch(
        /^herald: 404-06 /,
      );
      expect(await fails(1, 'accounts', 'list', '--cursor', 'nope')).toMatch(/^herald: 400-03 /);
      expect(await fails(1, 'deliveries', 'recover', '--application', '42', '--since', 'yesterday')).toMatch(/^herald: 40\d-\d\d /);
      expect(await fails(1, 'accounts', 'list', '--key', 'not-a-key-at-all')).toMatch(/^herald: 403-02 /);
    });

    it('2 for a usage error: one line and a pointer to the help; nothing is sent', async () => {
      expect(await fails(2, 'frobnicate')).toBe("herald: unknown command 'frobnicate' (see herald --help)");
      expect(await fails(2, 'accounts', 'frob')).toBe("herald: unknown command 'frob' (see herald accounts --help)");
      expect(await fails(2, 'accounts', 'list', '--jsno')).toMatch(
        /^herald: unknown option '--jsno' .*\(see herald accounts list --help\)$/,
      );
      expect(await fails(2, 'accounts', 'get')).toBe("herald: missing required argument 'account-id' (see herald accounts get --help)");
      expect(await fails(2, 'accounts', 'create')).toMatch(
        /^herald: required option '--name <name>' not specified \(see herald accounts create --help\)$/,
      );
      expect(await fails(2, 'deliveries', 'list')).toMatch(/--application/);
      expect(await fails(2, 'deliveries', 'list', '--application', '42', '--status', 'lost')).toMatch(
        /Allowed choices are pending, .*--help\)$/,
      );
      expect(await fails(2, 'applications', 'create', '--account', 'acc_x', '--name', 'n', '--id', '4.2')).toMatch(/'--id <n>'.*--help\)$/);
      expect(await fails(2, 'accounts', 'list', '--limit', 'ten')).toMatch(/--limit/);
      expect(await fails(2, 'accounts', 'get', 'a', 'b')).toMatch(/too many arguments/);
      expect(await fails(2, 'accounts', 'list', '--url', 'not a url')).toMatch(/^herald: --url must be an absolute URL/);
      const noKey = await runCli(['accounts', 'list'], { ...env, HERALD_ADMIN_KEY: undefined });
      expect(noKey).toEqual({
        code: 2,
        stdout: '',
        stderr: 'herald: no API key: give --key or set HERALD_ADMIN_KEY (see herald accounts list --help)\n',
      });
      // A command group without its command: its help, on stderr.
      const bare = await herald('deliveries');
      expect(bare.code).toBe(2);
      expect(bare.stdout).toBe('');
      expect(bare.stderr).toMatch(/^Usage: herald deliveries /);
      expect((await herald()).code).toBe(2);
    });

    it('3 when the api cannot be reached, naming the URL', async () => {
      const closed = await freePort();
      const url = `http://127.0.0.1:${closed}`;
      for (const args of [
        ['accounts', 'list'],
        ['accounts', 'list', '--json'],
        ['keys', 'create', '--account', 'acc_00000000000000000000000000', '--name', 'n'],
        ['deliveries', 'recover', '--application', '42', '--since', '2026-01-01T00:00:00Z'],
      ]) {
        const line = await fails(3, ...args, '--url', url);
        expect(line).toBe(`herald: cannot reach Herald at ${url} (connect ECONNREFUSED 127.0.0.1:${closed}); is it running? (--url)`);
      }
      // The same through the environment's PORT.
      const viaPort = await runCli(['applications', 'list'], { ...env, PORT: String(closed) });
      expect(viaPort.code).toBe(3);
      expect(viaPort.stderr).toContain(`cannot reach Herald at ${url}`);
    });
  });
});
