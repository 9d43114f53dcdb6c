import http from 'node:http';
import net from 'node:net';

/**
 * The receiver for delivery benchmarks, on 127.0.0.1: records when each webhook-id arrived and
 * answers at once (or as `reply` decides). The same sink serves Herald and the bare-client
 * baseline, so their ratio compares like with like.
 */
export class BenchSink {
  readonly arrivals = new Map<string, number[]>();
  count = 0;
  /** Answers given, and the time they took in all, from the request's first byte to the answer's last (ms). */
  private answered = 0;
  private answeringMs = 0;
  private server: http.Server;
  private waiters: { count: number; resolve: () => void }[] = [];
  port = 0;

  /**
   * `replyDelayMs`: how long each answer takes, as a slow receiver's would (the arrival is recorded
   * at once; Infinity: it never answers). `host`: another loopback address is another destination
   * host to the worker (its per-host caps), as another customer's receiver would be.
   */
  constructor(
    private reply: (webhookId: string, nth: number) => number = () => 200,
    private readonly replyDelayMs = 0,
    private readonly host = '127.0.0.1',
  ) {
    this.server = http.createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
      const received = performance.now();
      res.on('finish', () => {
        this.answered++;
        this.answeringMs += performance.now() - received;
      });
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['webhook-id'] ?? '');
        const times = this.arrivals.get(id) ?? [];
        times.push(performance.timeOrigin + performance.now());
        this.arrivals.set(id, times);
        this.count++;
        const answer = () => {
          res.writeHead(this.reply(id, times.length), { 'content-type': 'text/plain', 'content-length': '2' });
          res.end('ok');
        };
        if (this.replyDelayMs === Infinity) return; // hangs until the caller gives up
        if (this.replyDelayMs > 0) setTimeout(answer, this.replyDelayMs);
        else answer();
        this.waiters = this.waiters.filter((w) => (this.count >= w.count ? (w.resolve(), false) : true));
      });
    });
  }

  /**
   * How long an answer took on average as this receiver saw it (its own event loop's delays
   * included): what a cap of N in flight allows is N / this, at best.
   */
  get meanAnswerMs(): number {
    return this.answered === 0 ? 0 : this.answeringMs / this.answered;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, this.host, resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://${this.host}:${this.port}/hook`;
  }

  reset(reply?: (webhookId: string, nth: number) => number): void {
    this.arrivals.clear();
    this.count = 0;
    if (reply) this.reply = reply;
  }

  /** Resolves when `count` requests have arrived in total. */
  waitFor(count: number, timeoutMs: number): Promise<void> {
    if (this.count >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`sink got ${this.count} of ${count} requests in ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
