import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { WebhookSender } from './webhook-sender';

/** A receiver on 127.0.0.1 that answers 200 at once, or never (path /hang). */
async function startReceiver(): Promise<{ url: string; server: Server; hanging: ServerResponse[] }> {
  const hanging: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => (req.url === '/hang' ? hanging.push(res) : res.end('ok')));
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
});
