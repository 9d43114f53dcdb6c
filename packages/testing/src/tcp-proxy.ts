import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Closes the listener and cuts every connection: to the app, the database is gone. */
  cut(): Promise<void>;
  /** Listens again on the same port: the database is back. */
  resume(): Promise<void>;
}

/** A loopback TCP relay placed between the app and PostgreSQL, so a test can take the database away. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    cut: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        if (!server.listening) return resolve();
        server.close(() => resolve());
      }),
    resume: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
  };
}

/** A proxy in front of the server in `databaseUrl`, and the same URL pointed through it. */
export async function proxyDatabase(databaseUrl: string): Promise<{ proxy: TcpProxy; url: string }> {
  const server = new URL(databaseUrl);
  const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
  const viaProxy = new URL(databaseUrl);
  viaProxy.port = String(proxy.port);
  return { proxy, url: viaProxy.toString() };
}
