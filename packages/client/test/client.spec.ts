import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { createHeraldClient, HeraldApiError, unwrap } from '../src';

/** A stand-in for fetch that records each request and answers with `answer`. */
function recordingFetch(answer: () => Response | Promise<Response>) {
  const requests: Request[] = [];
  const fetch = (async (input: Request | string | URL, init?: RequestInit) => {
    requests.push(new Request(input as Request, init));
    return answer();
  }) as typeof globalThis.fetch;
  return { fetch, requests };
}
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('createHeraldClient', () => {
  it('sends the API key, joins the base URL (its path too), and encodes each path parameter as one segment', async () => {
    const { fetch, requests } = recordingFetch(() => json(200, { success: true, data: { id: 'evt_1' } }));
    const herald = createHeraldClient({ baseUrl: 'http://127.0.0.1:3000/herald/', apiKey: 'hk_key', fetch });
    await herald.GET('/application/{application_id}/events/{event_id}', { params: { path: { application_id: 42, event_id: 'a/b c' } } });
    expect(requests[0].url).toBe('http://127.0.0.1:3000/herald/application/42/events/a%2Fb%20c');
    expect(requests[0].headers.get('authorization')).toBe('hk_key');
  });

  it('asks a key given as a function at each request, and sends none while it answers nothing', async () => {
    const { fetch, requests } = recordingFetch(() => json(200, { status: 'ok' }));
    let key: string | null = 'hp_portal-token';
    const herald = createHeraldClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: () => key, fetch });
    await herald.GET('/healthz');
    key = null;
    await herald.GET('/healthz');
    key = 'hk_other';
    await herald.GET('/healthz');
    expect(requests.map((request) => request.headers.get('authorization'))).toEqual(['hp_portal-token', null, 'hk_other']);
  });

  it('leaves out undefined query values, and sends a JSON body only when there is one', async () => {
    const { fetch, requests } = recordingFetch(() => json(200, { success: true, data: [], next_cursor: null }));
    const herald = createHeraldClient({ baseUrl: 'http://127.0.0.1:3000', fetch });
    await herald.GET('/admin/applications', { params: { query: { account_id: undefined, limit: 5 } } });
    expect(requests[0].url).toBe('http://127.0.0.1:3000/admin/applications?limit=5');
    expect(requests[0].headers.get('authorization')).toBeNull();
    await herald.POST('/admin/accounts', { body: { name: 'Acme' } });
    expect(requests[1].headers.get('content-type')).toBe('application/json');
    expect(await requests[1].json()).toEqual({ name: 'Acme' });
    await herald.POST('/application/{application_id}/webhook/disable', { params: { path: { application_id: 42 } } });
    expect(requests[2].headers.get('content-type')).toBeNull();
    expect(requests[2].body).toBeNull();
  });

  it('gives up on a request unanswered after timeoutMs, with fetch’s own TimeoutError', async () => {
    const never = ((_input: Request, init?: RequestInit) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)),
      )) as typeof globalThis.fetch;
    const herald = createHeraldClient({ baseUrl: 'http://127.0.0.1:3000', fetch: never, timeoutMs: 50 });
    await expect(herald.GET('/healthz')).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('lets a caller’s own signal abort a call even with timeoutMs set', async () => {
    const never = ((_input: Request, init?: RequestInit) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)),
      )) as typeof globalThis.fetch;
    const herald = createHeraldClient({ baseUrl: 'http://127.0.0.1:3000', fetch: never, timeoutMs: 60_000 });
    const caller = new AbortController();
    const call = herald.GET('/healthz', { signal: caller.signal });
    caller.abort(new Error('the user navigated away'));
    await expect(call).rejects.toThrow('the user navigated away');
  });

  it('passes redirect through, so a redirect can be seen instead of followed', async () => {
    const { fetch, requests } = recordingFetch(() => json(200, { status: 'ok' }));
    await createHeraldClient({ baseUrl: 'http://127.0.0.1:3000', fetch, redirect: 'manual' }).GET('/healthz');
    expect(requests[0].redirect).toBe('manual');
  });
});

describe('unwrap', () => {
  const herald = (answer: () => Response) => createHeraldClient({ baseUrl: 'http://127.0.0.1:3000', fetch: recordingFetch(answer).fetch });

  it('resolves to the success body', async () => {
    const body = { success: true, data: { id: 'acc_1', name: 'Acme', created_at: '2026-11-25T00:00:00.000Z' } };
    await expect(unwrap(herald(() => json(201, body)).POST('/admin/accounts', { body: { name: 'Acme' } }))).resolves.toEqual(body);
  });

  it("throws Herald's error as a HeraldApiError: status, code, message and details", async () => {
    const envelope = {
      success: false,
      error: { code: '400-02', message: 'Validation failed.', details: [{ field: 'name', message: 'name is required' }] },
    };
    const call = unwrap(herald(() => json(400, envelope)).POST('/admin/accounts', { body: { name: '' } }));
    await expect(call).rejects.toBeInstanceOf(HeraldApiError);
    await expect(call).rejects.toMatchObject({
      status: 400,
      code: '400-02',
      message: 'Validation failed.',
      details: envelope.error.details,
    });
  });

  it("throws a HeraldApiError without a code when the answer is not Herald's", async () => {
    const call = unwrap(herald(() => new Response('<html>Bad gateway</html>', { status: 502 })).GET('/admin/accounts'));
    await expect(call).rejects.toMatchObject({ status: 502, code: null });
  });
});

describe('the README', () => {
  it('has an example that compiles against the generated types', () => {
    const readme = readFileSync(path.join(__dirname, '../README.md'), 'utf8');
    const example = readme.match(/```ts\n([\s\S]*?)```/)?.[1];
    expect(example).toContain("from '@herald/client'");
    // Compiled as a file of this package, with '@herald/client' pointing at its source.
    const file = path.join(__dirname, 'readme-example.ts');
    const host = ts.createCompilerHost({});
    const readFile = host.readFile.bind(host);
    host.readFile = (name) => (path.resolve(name) === file ? example : readFile(name));
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (name) => path.resolve(name) === file || fileExists(name);
    const program = ts.createProgram(
      [file],
      {
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.CommonJS,
        moduleResolution: ts.ModuleResolutionKind.Node10,
        esModuleInterop: true,
        types: ['node'],
        baseUrl: path.join(__dirname, '..'),
        paths: { '@herald/client': ['src/index.ts'] },
      },
      host,
    );
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '));
    expect(problems).toEqual([]);
  });
});
