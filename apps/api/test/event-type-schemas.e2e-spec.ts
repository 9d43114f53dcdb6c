import { sql } from '@herald/database/testing';
import { Sink } from '@herald/testing';
import { detailFields, expectError } from './support/expect-error';
import { Tenant } from './support/fixtures';
import { ADMIN_KEY, createTestApp, TestApp } from './support/test-app';

/** PRODUCT.md §15: event types carry a JSON Schema of their payload, documented or enforced at publish. */
describe('event-type schemas', () => {
  let t: TestApp;
  let tenant: Tenant;
  let app: string;
  const admin = { Authorization: ADMIN_KEY };
  const agentSchema = {
    type: 'object',
    required: ['agent_id', 'call_id'],
    properties: {
      call_id: { type: 'string', description: 'The call.' },
      agent_id: { type: 'string', pattern: '^a-[0-9]+$' },
      wrap_up_seconds: { type: 'integer', minimum: 0 },
    },
  };
  const createType = (body: object) => t.http.post('/admin/event_types').set(admin).send(body);
  const updateType = (name: string, body: object) => t.http.put(`/admin/event_types/${name}`).set(admin).send(body);
  const publish = (event: string, payload: unknown) =>
    t.http.post(`${app}/events`).set({ Authorization: tenant.key }).send({ event, payload });
  const eventCount = async () =>
    Number((await sql(t.db.url, 'SELECT count(*) AS n FROM events WHERE application_id = $1', [tenant.applicationId]))[0].n);

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.fixtures.tenantWithWebhook();
    app = `/application/${tenant.applicationId}`;
  });
  afterAll(() => t.close());

  describe('the catalogue', () => {
    it('takes a schema, enforce and an example, and returns them from every route, properties in the order written', async () => {
      const body = {
        name: 'acw_end',
        description: 'An agent finished after-call work.',
        schema: agentSchema,
        enforce: true,
        example: { agent_id: 'a-1', call_id: 'c-1' },
      };
      const created = await createType(body);
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ success: true, data: body });

      const one = await t.http.get('/event_types/acw_end').set({ Authorization: tenant.key }).expect(200);
      expect(one.body).toEqual({ success: true, data: body });
      expect(Object.keys(one.body.data.schema.properties)).toEqual(['call_id', 'agent_id', 'wrap_up_seconds']);

      const list = await t.http.get('/event_types').set({ Authorization: tenant.key }).expect(200);
      expect(list.body.data).toContainEqual(body);
      expect(list.body.data).toContainEqual({
        name: 'acw_start',
        description: expect.any(String),
        schema: null,
        enforce: false,
        example: null,
      });
    });

    it('answers 404-08 for an event type it does not have, malformed names and operational notices included', async () => {
      for (const name of ['no_such_type', 'UPPER', 'webhook.disabled', 'a'.repeat(65)]) {
        expectError(await t.http.get(`/event_types/${name}`).set({ Authorization: tenant.key }), 404, '404-08');
        expectError(await updateType(name, { description: 'x' }), 404, '404-08');
      }
    });

    it('refuses a schema that does not compile with 400-02, naming the place and the reason', async () => {
      const bad = await createType({ name: 'bad_schema_1', schema: { type: 'object', properties: { agent_id: { type: 'strin' } } } });
      expectError(bad, 400, '400-02');
      expect(bad.body.error.details).toContainEqual({
        field: 'schema/properties/agent_id/type',
        message: 'must be equal to one of the allowed values',
      });

      const typo = await createType({ name: 'bad_schema_2', schema: { type: 'object', requried: ['a'] } });
      expectError(typo, 400, '400-02');
      expect(typo.body.error.details).toEqual([{ field: 'schema', message: 'strict mode: unknown keyword: "requried"' }]);

      const regex = await createType({ name: 'bad_schema_3', schema: { properties: { a: { pattern: '^(?!x)' } } } });
      expectError(regex, 400, '400-02');
      expect(detailFields(regex)).toEqual(['schema/properties/a/pattern']);

      for (const schema of [[], 'object', 12, true]) {
        const res = await createType({ name: 'bad_schema_4', schema });
        expectError(res, 400, '400-02');
        expect(detailFields(res)).toEqual(['schema']);
      }
      const stored = await sql(t.db.url, "SELECT count(*) AS n FROM event_types WHERE name LIKE 'bad_schema_%'");
      expect(Number(stored[0].n)).toBe(0);
    });

    it('refuses an example that does not satisfy the schema, and enforce without a schema', async () => {
      const res = await createType({ name: 'bad_example', schema: agentSchema, example: { agent_id: 7, call_id: 'c' } });
      expectError(res, 400, '400-02');
      expect(res.body.error.details).toEqual([{ field: 'example/agent_id', message: 'must be string' }]);

      const noSchema = await createType({ name: 'bad_enforce', enforce: true });
      expectError(noSchema, 400, '400-02');
      expect(detailFields(noSchema)).toEqual(['enforce']);
    });

    it('resolves references only inside the document: a remote $ref is refused and never fetched', async () => {
      const sink = await new Sink(() => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: '{"type":"string"}',
      })).start();
      try {
        for (const $ref of [`http://127.0.0.1:${sink.port}/agent.json`, `http://127.0.0.1:${sink.port}/agent.json#/x`]) {
          const res = await createType({ name: 'remote_ref', schema: { type: 'object', properties: { agent: { $ref } } } });
          expectError(res, 400, '400-02');
          expect(res.body.error.details).toEqual([
            { field: 'schema', message: expect.stringMatching(/can't resolve reference.*Herald fetches nothing/) },
          ]);
        }
        const local = await createType({
          name: 'local_ref',
          schema: { type: 'object', properties: { agent: { $ref: '#/$defs/agent' } }, $defs: { agent: { type: 'string' } } },
          enforce: true,
        });
        expect(local.status).toBe(201);
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(sink.received).toEqual([]);
      } finally {
        await sink.close();
      }
    });

    it('bounds the sizes: a schema over 64 KiB is 400-02, a body over the route limit 413-00', async () => {
      const huge = { type: 'object', description: 'x'.repeat(64 * 1024) };
      const res = await createType({ name: 'huge_schema', schema: huge });
      expectError(res, 400, '400-02');
      expect(res.body.error.details).toEqual([{ field: 'schema', message: 'must be at most 65536 bytes of JSON' }]);

      const body = { name: 'huge_body', schema: huge, example: { text: 'y'.repeat(100 * 1024) } };
      expectError(await createType(body), 413, '413-00');
    });

    it("keeps an admin's schema exactly, Object.prototype names as ordinary keys", async () => {
      const text =
        '{"name":"proto_names","schema":{"type":"object","required":["constructor"],"patternProperties":{"^__proto__$":{"type":"integer"}}},"enforce":true}';
      const res = await t.http.post('/admin/event_types').set(admin).set('Content-Type', 'application/json').send(text);
      expect(res.status).toBe(201);
      expect(JSON.stringify(res.body.data.schema)).toBe(JSON.stringify(JSON.parse(text).schema));
      expectError(await publish('proto_names', {}), 400, '400-08');
      const ok = await t.http
        .post(`${app}/events`)
        .set({ Authorization: tenant.key })
        .set('Content-Type', 'application/json')
        .send('{"event":"proto_names","payload":{"constructor":"c","__proto__":1}}');
      expect(ok.status).toBe(202);
    });
  });

  describe('PUT /admin/event_types/{name}', () => {
    beforeAll(async () => {
      await createType({ name: 'queue_joined', description: 'A caller joined a queue.' }).expect(201);
    });

    it('changes the fields sent and keeps the others', async () => {
      const res = await updateType('queue_joined', { schema: agentSchema, example: { agent_id: 'a-2', call_id: 'c-2' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        name: 'queue_joined',
        description: 'A caller joined a queue.',
        schema: agentSchema,
        enforce: false,
        example: { agent_id: 'a-2', call_id: 'c-2' },
      });
      const described = await updateType('queue_joined', { description: 'Joined.' });
      expect(described.body.data).toEqual({ ...res.body.data, description: 'Joined.' });
    });

    it('checks the new state as a whole: a new schema against the stored example', async () => {
      const res = await updateType('queue_joined', { schema: { type: 'object', required: ['queue_id'] } });
      expectError(res, 400, '400-02');
      expect(res.body.error.details).toEqual([
        { field: 'example/queue_id', message: expect.stringMatching(/stored example.*is required/) },
      ]);

      const both = await updateType('queue_joined', { schema: { type: 'object', required: ['queue_id'] }, example: { queue_id: 'q' } });
      expect(both.status).toBe(200);
      const removed = await updateType('queue_joined', { schema: null, example: null });
      expect(removed.body.data).toMatchObject({ schema: null, example: null, enforce: false });
      expectError(await updateType('queue_joined', { enforce: true }), 400, '400-02');
    });

    it('refuses unknown fields and wrong types with 400-02, an account key with 403-04', async () => {
      expectError(await updateType('queue_joined', { name: 'renamed' }), 400, '400-02');
      expectError(await updateType('queue_joined', { enforce: 'yes' }), 400, '400-02');
      expectError(
        await t.http.put('/admin/event_types/queue_joined').set({ Authorization: tenant.key }).send({ enforce: false }),
        403,
        '403-04',
      );
    });
  });

  describe('publishing with enforce', () => {
    beforeAll(async () => {
      await createType({ name: 'agent_enforced', schema: agentSchema, enforce: true }).expect(201);
      await createType({ name: 'agent_documented', schema: agentSchema, enforce: false }).expect(201);
    });

    it('accepts a matching payload', async () => {
      expect((await publish('agent_enforced', { agent_id: 'a-1', call_id: 'c-1', extra: [1] })).status).toBe(202);
    });

    it('refuses a payload that does not match with 400-08, each problem by JSON pointer, and stores nothing', async () => {
      const before = await eventCount();
      const res = await publish('agent_enforced', { agent_id: 'b-1', wrap_up_seconds: -1 });
      expectError(res, 400, '400-08');
      expect(res.body.error.details).toEqual([
        { field: 'payload/call_id', message: 'is required' },
        { field: 'payload/agent_id', message: 'must match pattern "^a-[0-9]+$"' },
        { field: 'payload/wrap_up_seconds', message: 'must be >= 0' },
      ]);
      expect(res.body.error.message).toMatch(/"agent_enforced"/);
      expect(await eventCount()).toBe(before);
    });

    it('names at most 20 problems', async () => {
      await createType({
        name: 'many_fields',
        schema: { type: 'object', properties: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, { type: 'integer' }])) },
        enforce: true,
      }).expect(201);
      const res = await publish('many_fields', Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, 'x'])));
      expectError(res, 400, '400-08');
      expect(res.body.error.details).toHaveLength(20);
    });

    it('lets any payload through while the schema only documents', async () => {
      expect((await publish('agent_documented', { anything: true })).status).toBe(202);
    });

    it('refuses a whole batch for one bad item, naming it, and stores nothing', async () => {
      const before = await eventCount();
      const res = await t.http
        .post(`${app}/events/batch`)
        .set({ Authorization: tenant.key })
        .send({
          events: [
            { event: 'agent_enforced', payload: { agent_id: 'a-1', call_id: 'c-1' } },
            { event: 'agent_documented', payload: {} },
            { event: 'agent_enforced', payload: { agent_id: 5, call_id: 'c-3' } },
          ],
        });
      expectError(res, 400, '400-08');
      expect(res.body.error.details).toEqual([{ field: 'events[2].payload/agent_id', message: 'must be string' }]);
      expect(await eventCount()).toBe(before);
    });

    it('answers a catastrophic pattern on a 200 KiB string at once (patterns match in linear time)', async () => {
      await createType({
        name: 'redos',
        schema: { type: 'object', properties: { a: { type: 'string', pattern: '^(a+)+$' } } },
        enforce: true,
      }).expect(201);
      const started = Date.now();
      const res = await publish('redos', { a: `${'a'.repeat(200 * 1024)}!` });
      expectError(res, 400, '400-08');
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it('reaches another api process within a second of the change', async () => {
      await createType({ name: 'switched', schema: agentSchema }).expect(201);
      const other = await createTestApp({ databaseUrl: t.db.url });
      try {
        const publishThere = () =>
          other.http.post(`${app}/events`).set({ Authorization: tenant.key }).send({ event: 'switched', payload: {} });
        expect((await publishThere()).status).toBe(202); // the other process now holds "not enforced"

        await updateType('switched', { enforce: true }).expect(200);
        const changedAt = Date.now();
        let status = 202;
        while (status === 202 && Date.now() - changedAt < 1_000) {
          status = (await publishThere()).status;
          if (status === 202) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        expect(status).toBe(400);

        await updateType('switched', { enforce: false }).expect(200);
        const relaxedAt = Date.now();
        while (status !== 202 && Date.now() - relaxedAt < 1_000) status = (await publishThere()).status;
        expect(status).toBe(202);
      } finally {
        await other.app.close();
      }
    });
  });

  it('lists 400-08 and 404-08 in the error directory', async () => {
    const codes = await t.http.get('/error_codes').set({ Authorization: tenant.key }).expect(200);
    expect(codes.body.data).toContainEqual({ code: '400-08', message: "The payload does not match the event type's schema." });
    expect(codes.body.data).toContainEqual({ code: '404-08', message: 'Event type not found.' });
  });
});
