import { Sink } from '@herald/testing';
import { startProxy } from './support/connect-proxy';
import { TestWorker } from './support/test-worker';

describe('egress through an HTTP CONNECT proxy (HERALD_EGRESS_PROXY, PRODUCT.md §17)', () => {
  let sink: Sink;
  beforeEach(async () => {
    sink = await new Sink().start();
  });
  afterEach(() => sink.close());

  it('asks the proxy for the address Herald resolved and checked, keeps the Host header, and sends its credentials', async () => {
    const proxy = await startProxy();
    const worker = await TestWorker.start({
      HERALD_EGRESS_PROXY: proxy.url('herald:pa%20ss'),
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8,::1/128',
    });
    try {
      const app = await worker.application({ url: `http://localhost:${sink.port}/hook` });
      const id = (await worker.publish(app))!;
      const [request] = await sink.waitFor(1);
      expect((await worker.settled(app, id)).status).toBe('succeeded');
      expect(proxy.asked).toEqual([{ target: `127.0.0.1:${sink.port}`, auth: `Basic ${Buffer.from('herald:pa ss').toString('base64')}` }]);
      expect(request.headers.host).toBe(`localhost:${sink.port}`);
      expect(request.path).toBe('/hook');
    } finally {
      await worker.close();
      await proxy.close();
    }
  });

  it('never asks the proxy for a destination the policy refuses: destination_blocked, nothing tunnelled', async () => {
    const proxy = await startProxy();
    // Only 127.0.0.2 is allowed, so the sink's 127.0.0.1 is internal to this worker.
    const worker = await TestWorker.start({ HERALD_EGRESS_PROXY: proxy.url(), HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.2/32' });
    try {
      for (const url of [sink.url('/hook'), `http://localhost:${sink.port}/hook`]) {
        const app = await worker.application({ url, policy: { maxRetries: 0 } });
        const delivery = await worker.settled(app, (await worker.publish(app))!);
        expect(delivery.attempts[0]).toMatchObject({ error: 'destination_blocked', responseStatus: null });
      }
      expect(proxy.asked).toEqual([]);
      expect(sink.received).toEqual([]);
    } finally {
      await worker.close();
      await proxy.close();
    }
  });

  it('fails the attempt when the proxy refuses the tunnel, and sends nothing around it', async () => {
    const proxy = await startProxy(true);
    const worker = await TestWorker.start({ HERALD_EGRESS_PROXY: proxy.url() });
    try {
      const app = await worker.application({ url: sink.url('/hook'), policy: { maxRetries: 0 } });
      const delivery = await worker.settled(app, (await worker.publish(app))!);
      expect(delivery.status).toBe('failed');
      expect(delivery.attempts[0]).toMatchObject({ responseStatus: null, error: expect.any(String) });
      expect(proxy.asked).toEqual([{ target: `127.0.0.1:${sink.port}`, auth: undefined }]);
      expect(sink.received).toEqual([]);
    } finally {
      await worker.close();
      await proxy.close();
    }
  });
});
