import { AttemptError, AttemptResult } from '@herald/core';
import type { IncomingHttpHeaders } from 'node:http';
import { Dispatcher } from 'undici';
import { DESTINATION_BLOCKED } from './safe-connector';

/** How much of an answer's body the attempt log keeps. */
export const RESPONSE_EXCERPT_BYTES = 4 * 1024;

export interface OutgoingWebhook {
  url: string;
  headers: Record<string, string>;
  body: string;
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|EPROTO$)/;

/** What an exchange ends with, before its duration is added. */
type ExchangeEnd = Omit<AttemptResult, 'durationMs'>;

/** The reason an exchange is aborted once its excerpt is full: the rest of the body is not read. */
const EXCERPT_FULL = new Error('response excerpt complete');

/**
 * POSTs one webhook and classifies what happened. It never throws: a timeout, a refused
 * connection or a blocked destination is a result like a 500. Redirects are not followed
 * (undici's dispatch() does not), so a 3xx is recorded as the failure it is.
 *
 * Straight on undici's dispatch() with a small handler (Exchange), not request(): that one builds
 * a Readable body, an AsyncResource and an AbortSignal listener per attempt (issue 21, "cheaper
 * attempts"). Deadlines are one timer for every exchange in flight: all share the same timeout,
 * so they fall due in the order they started, and the timer is armed for the oldest only.
 */
export class WebhookSender {
  /** Exchanges in flight, oldest first: their deadlines in the same order. */
  private readonly exchanges = new Set<Exchange>();
  private deadlineTimer: NodeJS.Timeout | null = null;
  /** Exchanges in flight per caller's cancel signal (the worker's shutdown): one listener per signal cuts them all off. */
  private readonly cancellable = new WeakMap<AbortSignal, Set<Exchange>>();

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly timeoutMs: number,
  ) {}

  /** Closes kept-alive connections once the delivery loop has drained (the last shutdown phase). */
  async onApplicationShutdown(): Promise<void> {
    await this.dispatcher.close();
  }

  send(webhook: OutgoingWebhook, abort?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    return new Promise((resolve) => {
      const cancelledWith = abort ? this.inFlightFor(abort) : undefined;
      const exchange = new Exchange(started + this.timeoutMs, (end) => {
        this.exchanges.delete(exchange);
        cancelledWith?.delete(exchange);
        if (this.exchanges.size === 0) this.disarmDeadlines();
        resolve({ ...end, durationMs: Math.round(performance.now() - started) });
      });
      this.exchanges.add(exchange);
      cancelledWith?.add(exchange);
      if (!this.deadlineTimer) this.armDeadlines(this.timeoutMs);
      if (abort?.aborted) exchange.cutOff();
      try {
        const url = new URL(webhook.url);
        this.dispatcher.dispatch(
          { origin: url.origin, path: url.pathname + url.search, method: 'POST', headers: webhook.headers, body: webhook.body },
          exchange,
        );
      } catch (error) {
        exchange.onResponseError(null, error as Error);
      }
    });
  }

  /** Cuts off every exchange past its deadline, then waits for the oldest of the rest. */
  private readonly sweepDeadlines = (): void => {
    this.deadlineTimer = null;
    const now = performance.now();
    for (const exchange of this.exchanges) {
      if (exchange.deadline > now) return this.armDeadlines(exchange.deadline - now);
      // Out of the sweep now, whenever undici reports the abort.
      this.exchanges.delete(exchange);
      exchange.cutOff();
    }
  };

  private armDeadlines(ms: number): void {
    this.deadlineTimer = setTimeout(this.sweepDeadlines, Math.max(0, ms));
  }

  private disarmDeadlines(): void {
    if (this.deadlineTimer) clearTimeout(this.deadlineTimer);
    this.deadlineTimer = null;
  }

  private inFlightFor(abort: AbortSignal): Set<Exchange> {
    const known = this.cancellable.get(abort);
    if (known) return known;
    const exchanges = new Set<Exchange>();
    abort.addEventListener('abort', () => exchanges.forEach((exchange) => exchange.cutOff()), { once: true });
    this.cancellable.set(abort, exchanges);
    return exchanges;
  }
}

/**
 * One exchange, as undici reports it (Dispatcher.DispatchHandler): the status, Retry-After and the
 * first RESPONSE_EXCERPT_BYTES of the body; a longer body is cut off there (and its connection
 * closed). Settles exactly once.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  /** Set when Herald cut the exchange off (its deadline, or shutdown): whatever undici then reports is a timeout. */
  private cutOffWith: Error | null = null;
  private status: number | null = null;
  private retryAfter: IncomingHttpHeaders['retry-after'];
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;

  constructor(
    readonly deadline: number,
    private readonly settle: (end: ExchangeEnd) => void,
  ) {}

  cutOff(): void {
    if (this.cutOffWith || this.settled) return;
    this.cutOffWith = new Error('the attempt was cut off');
    // Before undici has started the request, onRequestStart aborts it as it does.
    this.controller?.abort(this.cutOffWith);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.cutOffWith) controller.abort(this.cutOffWith);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx answers are interim; the final one follows.
    if (statusCode < 200) return;
    this.status = statusCode;
    this.retryAfter = headers['retry-after'];
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.size >= RESPONSE_EXCERPT_BYTES) return;
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size >= RESPONSE_EXCERPT_BYTES) controller.abort(EXCERPT_FULL);
  }

  onResponseEnd(): void {
    this.answered();
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    if (error === EXCERPT_FULL && this.status !== null) return this.answered();
    this.end({ status: null, excerpt: null, error: classify(error, this.cutOffWith !== null), retryAfterSeconds: null });
  }

  private answered(): void {
    this.end({
      status: this.status,
      excerpt: Buffer.concat(this.chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8'),
      error: null,
      retryAfterSeconds: parseRetryAfter(this.retryAfter),
    });
  }

  private end(end: ExchangeEnd): void {
    if (this.settled) return;
    this.settled = true;
    this.settle(end);
  }
}

/** Retry-After as delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  if (/^\d+$/.test(raw.trim())) return Number(raw.trim());
  const date = Date.parse(raw);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

function classify(error: unknown, aborted: boolean): AttemptError {
  const codes = errorCodes(error);
  if (codes.includes(DESTINATION_BLOCKED)) return 'destination_blocked';
  if (codes.includes('UND_ERR_CONNECT_TIMEOUT')) return 'connect_timeout';
  if (codes.some((code) => code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME')) return 'dns_error';
  if (codes.includes('ECONNREFUSED')) return 'connection_refused';
  if (codes.some((code) => TLS_CODES.test(code))) return 'tls_error';
  if (aborted || codes.some((code) => code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')) return 'timeout';
  return 'network_error';
}

function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}
