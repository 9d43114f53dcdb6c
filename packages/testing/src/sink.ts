import http from 'node:http';
import net from 'node:net';

export interface Received {
  at: number;
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Names and values as they came, in order: `headers` cannot hold a header named `__proto__`. */
  rawHeaders: string[];
  body: string;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (the connection stays open until the sink closes). */
  hang?: boolean;
}

/**
 * A receiver on 127.0.0.1 that records every request and answers as the test says: the n-th
 * request (1-based) gets `reply(n, request)`. It also tracks how many requests it is serving
 * at once.
 */
export class Sink {
  readonly received: Received[] = [];
  maxConcurrent = 0;
  private concurrent = 0;
  private readonly sockets = new Set<net.Socket>();
  private readonly server: http.Server;
  private waiters: (() => void)[] = [];
  port = 0;

  constructor(private reply: (n: number, request: Received) => Reply = () => ({ status: 200 })) {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const request: Received = {
          at: Date.now(),
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          rawHeaders: req.rawHeaders,
          body,
        };
        this.received.push(request);
        this.concurrent++;
        this.maxConcurrent = Math.max(this.maxConcurrent, this.concurrent);
        this.waiters.splice(0).forEach((wake) => wake());
        const answer = this.reply(this.received.length, request);
        if (answer.hang) return;
        setTimeout(() => {
          this.concurrent--;
          res.writeHead(answer.status, answer.headers ?? { 'content-type': 'text/plain' });
          res.end(answer.body ?? `answer ${answer.status}`);
        }, answer.delayMs ?? 0);
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  respond(reply: (n: number, request: Received) => Reply): void {
    this.reply = reply;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Resolves once `count` requests have arrived, or fails after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 10_000): Promise<Received[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} requests at the sink, got ${this.received.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.received.slice(0, count);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
