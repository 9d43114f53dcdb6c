import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { RESPONSE_EXCERPT_BYTES, WebhookSender } from './webhook-sender';

/** A receiver on 127.0.0.1 that answers 200 at once, or never (path /hang), or with a long body (/long), or 429 (/busy). */
async function startReceiver(): Promise<{ url: string; server: Server; hanging: ServerResponse[] }> {
  const hanging: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/hang') return hanging.push(res);
      if (req.url === '/long') return res.end('é'.repeat(RESPONSE_EXCERPT_BYTES));
      if (req.url === '/busy') return res.writeHead(429, { 'retry-after': '7' }).end('slow down');
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, hanging };
}

describe('WebhookSender', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let agent: Agent;
  const webhook = (path: string) => ({ url: `${receiver.url}${path}`, headers: { 'content-type': 'application/json' }, body: '{}' });

  beforeEach(async () => {
    receiver = await startReceiver();
    agent = new Agent({ connections: 8 });
  });
  afterEach(async () => {
    receiver.hanging.forEach((res) => res.destroy());
    await agent.destroy();
    await new Promise((resolve) => receiver.server.close(resolve));
  });

  it('gives up on a receiver that does not answer within the timeout, as a timeout', async () => {
    const sender = new WebhookSender(agent, 300);
    const started = performance.now();
    const result = await sender.send(webhook('/hang'));
    const took = performance.now() - started;
    expect(result).toMatchObject({ status: null, error: 'timeout' });
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(5_000);
  });

  it('cuts off every attempt in flight when the caller aborts, and starts none after', async () => {
    const sender = new WebhookSender(agent, 60_000);
    const shutdown = new AbortController();
    const inFlight = [sender.send(webhook('/hang'), shutdown.signal), sender.send(webhook('/hang'), shutdown.signal)];
    while (receiver.hanging.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    shutdown.abort();
    for (const result of await Promise.all(inFlight)) expect(result).toMatchObject({ status: null, error: 'timeout' });
    expect(await sender.send(webhook('/ok'), shutdown.signal)).toMatchObject({ status: null, error: 'timeout' });
  });

  it('keeps sending with the same signal once earlier attempts ended, and leaves no deadline armed', async () => {
    const sender = new WebhookSender(agent, 60_000);
    const shutdown = new AbortController();
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const before = timers();
    for (let i = 0; i < 3; i++) expect(await sender.send(webhook('/ok'), shutdown.signal)).toMatchObject({ status: 200, excerpt: 'ok' });
    expect(timers()).toBe(before);
  });

  it('gives each exchange its own deadline when several are in flight, from the one timer they share', async () => {
    const sender = new WebhookSender(agent, 400);
    const started = performance.now();
    const first = sender.send(webhook('/hang')).then(() => performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = sender.send(webhook('/hang')).then(() => performance.now() - started);
    // An answer in between ends its own exchange only.
    expect(await sender.send(webhook('/ok'))).toMatchObject({ status: 200 });
    const [firstEnded, secondEnded] = await Promise.all([first, second]);
    expect(firstEnded).toBeGreaterThanOrEqual(390);
    expect(secondEnded).toBeGreaterThanOrEqual(590);
    expect(secondEnded - firstEnded).toBeGreaterThanOrEqual(150);
  });

  it('keeps the first RESPONSE_EXCERPT_BYTES of a long answer, and the status and Retry-After of any', async () => {
    const sender = new WebhookSender(agent, 60_000);
    const long = await sender.send(webhook('/long'));
    expect(long).toMatchObject({ status: 200, error: null });
    expect(Buffer.byteLength(long.excerpt!)).toBeLessThanOrEqual(RESPONSE_EXCERPT_BYTES);
    expect(long.excerpt!.length).toBeGreaterThanOrEqual(RESPONSE_EXCERPT_BYTES / 2 - 1);
    expect(await sender.send(webhook('/busy'))).toMatchObject({ status: 429, excerpt: 'slow down', retryAfterSeconds: 7, error: null });
  });
});
