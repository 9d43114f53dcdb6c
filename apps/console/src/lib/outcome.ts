/** Why no answer came (the sender's error kinds, packages/core attempt-result.ts), in words. */
const ERROR_WORDS: Record<string, string> = {
  dns_error: 'DNS lookup failed',
  connection_refused: 'connection refused',
  connect_timeout: 'connect timeout',
  tls_error: 'TLS handshake failed',
  destination_blocked: 'address not allowed',
  timeout: 'timed out',
  network_error: 'connection broke',
};

export function errorInWords(error: string): string {
  return ERROR_WORDS[error] ?? error.replaceAll('_', ' ');
}

/** An attempt's outcome in a few words: "HTTP 502", or the error kind when the receiver never answered. */
export function outcomeInWords(attempt: { response_status: number | null; error: string | null } | null): string | null {
  if (!attempt) return null;
  if (attempt.response_status !== null) return `HTTP ${attempt.response_status}`;
  if (attempt.error) return errorInWords(attempt.error);
  return 'no answer';
}

export function isSuccessStatus(status: number | null): boolean {
  return status !== null && status >= 200 && status < 300;
}
