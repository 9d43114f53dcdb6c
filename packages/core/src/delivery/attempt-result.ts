/**
 * What one attempt to deliver produced, as the sender classifies it. The sender never throws:
 * every outcome is one of these.
 */
export const ATTEMPT_ERRORS = [
  /** The host name did not resolve. */
  'dns_error',
  /** Nothing accepted the connection. */
  'connection_refused',
  /** No connection within the connect timeout. */
  'connect_timeout',
  /** The TLS handshake failed (certificate, protocol). */
  'tls_error',
  /** The destination resolved to an address Herald may not connect to (PRODUCT.md §5.4). */
  'destination_blocked',
  /** The whole attempt took longer than HERALD_DELIVERY_TIMEOUT_SECONDS. */
  'timeout',
  /** The connection broke after the request may have been sent. */
  'network_error',
] as const;
export type AttemptError = (typeof ATTEMPT_ERRORS)[number];

export interface AttemptResult {
  /** The HTTP status when the receiver answered; null when it did not. */
  status: number | null;
  /** The first 4 KiB of the answer's body, as text. */
  excerpt: string | null;
  error: AttemptError | null;
  /** A receiver's Retry-After, in seconds, when it sent one with 429 or 503. */
  retryAfterSeconds: number | null;
  durationMs: number;
}

/** Failures where the request surely never reached the receiver: safe to retry even at most once. */
export const NEVER_REACHED_RECEIVER: ReadonlySet<AttemptError> = new Set<AttemptError>([
  'dns_error',
  'connection_refused',
  'connect_timeout',
  'tls_error',
  'destination_blocked',
]);

export function isSuccess(result: AttemptResult): boolean {
  return result.status !== null && result.status >= 200 && result.status < 300;
}
