import http from 'node:http';
import net from 'node:net';

/**
 * A CONNECT proxy on 127.0.0.1 that records what it was asked for and tunnels it, or refuses
 * everything (`refuse`).
 */
export async function startProxy(
  refuse = false,
): Promise<{ url: (auth?: string) => string; asked: { target: string; auth?: string }[]; close: () => Promise<void> }> {
  const asked: { target: string; auth?: string }[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    asked.push({ target: req.url ?? '', auth: req.headers['proxy-authorization'] });
    if (refuse) return client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
    const target = new URL(`http://${req.url}`);
    const upstream = net.connect(Number(target.port), target.hostname.replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: (auth) => `http://${auth ? `${auth}@` : ''}127.0.0.1:${port}`,
    asked,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
