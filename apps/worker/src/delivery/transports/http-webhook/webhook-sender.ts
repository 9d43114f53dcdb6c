import { AttemptError, AttemptResult } from '@herald/core';
import { Dispatcher, request } from 'undici';
import { DESTINATION_BLOCKED } from './safe-connector';

/** How much of an answer's body the attempt log keeps. */
export const RESPONSE_EXCERPT_BYTES = 4 * 1024;

export interface OutgoingWebhook {
  url: string;
  headers: Record<string, string>;
  body: string;
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|UNABLE_TO_|EPROTO$)/;

/**
 * POSTs one webhook and classifies what happened. It never throws: a timeout, a refused
 * connection or a blocked destination is a result like a 500. Redirects are not followed
 * (undici's request() does not), so a 3xx is recorded as the failure it is.
 */
export class WebhookSender {
  /**
   * Attempts in flight per caller's cancel signal (the worker's shutdown). One listener per
   * signal aborts them all: AbortSignal.timeout + AbortSignal.any per attempt cost the worker
   * ~4% of its CPU under load (bench/README.md, issue 12).
   */
  private readonly cancellable = new WeakMap<AbortSignal, Set<AbortController>>();

  constructor(
    private readonly dispatcher: Dispatcher,
    private readonly timeoutMs: number,
  ) {}

  /** Closes kept-alive connections once the delivery loop has drained (the last shutdown phase). */
  async onApplicationShutdown(): Promise<void> {
    await this.dispatcher.close();
  }

  async send(webhook: OutgoingWebhook, abort?: AbortSignal): Promise<AttemptResult> {
    const started = performance.now();
    const controller = new AbortController();
    // The attempt's deadline: one timer in Node's list for this duration, cleared when it ends.
    const deadline = setTimeout(() => controller.abort(), this.timeoutMs);
    const inFlight = abort ? this.inFlightFor(abort) : undefined;
    inFlight?.add(controller);
    if (abort?.aborted) controller.abort();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const response = await request(webhook.url, {
        method: 'POST',
        headers: webhook.headers,
        body: webhook.body,
        dispatcher: this.dispatcher,
        signal: controller.signal,
      });
      const excerpt = await readExcerpt(response.body);
      return {
        status: response.statusCode,
        excerpt,
        error: null,
        retryAfterSeconds: parseRetryAfter(response.headers['retry-after']),
        durationMs: elapsed(),
      };
    } catch (error) {
      return {
        status: null,
        excerpt: null,
        error: classify(error, controller.signal.aborted),
        retryAfterSeconds: null,
        durationMs: elapsed(),
      };
    } finally {
      clearTimeout(deadline);
      inFlight?.delete(controller);
    }
  }

  private inFlightFor(abort: AbortSignal): Set<AbortController> {
    const known = this.cancellable.get(abort);
    if (known) return known;
    const controllers = new Set<AbortController>();
    abort.addEventListener('abort', () => controllers.forEach((controller) => controller.abort()), { once: true });
    this.cancellable.set(abort, controllers);
    return controllers;
  }
}

/** Reads at most RESPONSE_EXCERPT_BYTES; a longer body is cut off (and its connection closed). */
async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk as Buffer);
    size += (chunk as Buffer).length;
    if (size >= RESPONSE_EXCERPT_BYTES) break;
  }
  if (size >= RESPONSE_EXCERPT_BYTES) body.destroy();
  return Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
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
