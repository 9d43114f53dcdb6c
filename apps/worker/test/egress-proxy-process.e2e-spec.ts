import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { TLSSocket } from 'node:tls';
import { startProxy } from './support/connect-proxy';
import { TestWorker } from './support/test-worker';
import { workerProcess } from './support/worker-process';

/**
 * A certificate authority and a certificate for `localhost` signed by it, made with the machine's
 * openssl for this test only: the worker process trusts the authority through
 * NODE_EXTRA_CA_CERTS, as an operator's private CA would be trusted.
 */
function testCertificates(dir: string): { ca: string; key: string; cert: string } {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
    '-days',
    '1',
    '-subj',
    '/CN=Herald test CA',
  );
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=localhost');
  writeFileSync(file('san.ext'), 'subjectAltName=DNS:localhost\n');
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-out',
    file('server.pem'),
    '-days',
    '1',
    '-extfile',
    file('san.ext'),
  );
  return { ca: file('ca.pem'), key: readFileSync(file('server.key'), 'utf8'), cert: readFileSync(file('server.pem'), 'utf8') };
}

/**
 * PRODUCT.md §17, egress through a proxy, with the worker as production runs it (a process of
 * its own) and an https receiver: the worker resolves and checks `localhost`, asks the proxy for
 * the checked address, and speaks TLS through the tunnel with the URL's name (SNI and the
 * certificate check) and Host header. The in-process cases (credentials, a refused destination,
 * a refused tunnel) are in egress-proxy.e2e-spec.ts.
 */
describe('egress through a CONNECT proxy, worker process, https receiver', () => {
  let dir: string;
  let fixtures: TestWorker;
  let receiver: https.Server;
  const requests: { host?: string; servername: string | false | null; path?: string }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'herald-egress-tls-'));
    const { key, cert } = testCertificates(dir);
    receiver = https.createServer({ key, cert }, (req, res) => {
      req.resume();
      req.on('end', () => {
        requests.push({ host: req.headers.host, servername: (req.socket as TLSSocket).servername, path: req.url });
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    fixtures = await TestWorker.start({}, { runWorker: false });
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    await fixtures.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('tunnels to the checked address and keeps the URL’s name for TLS and Host', async () => {
    const port = (receiver.address() as net.AddressInfo).port;
    const proxy = await startProxy();
    const worker = workerProcess({
      DATABASE_URL: fixtures.db.url,
      HERALD_EGRESS_PROXY: proxy.url(),
      HERALD_ALLOWED_TARGET_CIDRS: '127.0.0.0/8,::1/128',
      HERALD_LOG_LEVEL: 'info',
      NODE_EXTRA_CA_CERTS: path.join(dir, 'ca.pem'),
    });
    try {
      await worker.printed('worker started');
      const app = await fixtures.application({ url: `https://localhost:${port}/hook`, policy: { maxRetries: 0 } });
      const delivery = await fixtures.settled(app, (await fixtures.publish(app))!);

      expect(delivery).toMatchObject({ status: 'succeeded', attempts: [{ responseStatus: 200, error: null }] });
      expect(proxy.asked).toEqual([{ target: `127.0.0.1:${port}`, auth: undefined }]);
      expect(requests).toEqual([{ host: `localhost:${port}`, servername: 'localhost', path: '/hook' }]);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exit;
      await proxy.close();
    }
  });
});
