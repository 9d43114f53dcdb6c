/**
 * The directory of every error Herald answers with. It is the single source of truth for
 * `GET /error_codes`, for the status of every error response and for the OpenAPI error schema.
 * A code's first three digits are its HTTP status. Codes are stable forever; messages may be
 * reworded; new codes may be added.
 */
export const ERROR_CATALOGUE = {
  BAD_REQUEST: { code: '400-00', message: 'Bad request.' },
  BODY_NOT_JSON: {
    code: '400-01',
    message: 'The request has no body, or the body is not a JSON object sent as application/json.',
  },
  VALIDATION_FAILED: { code: '400-02', message: 'Validation failed; details name each field in error.' },
  INVALID_PARAMETER: { code: '400-03', message: 'A path or query parameter is invalid.' },
  UNKNOWN_EVENT_TYPE: { code: '400-04', message: 'Unknown event type.' },
  URL_NOT_ALLOWED: {
    code: '400-05',
    message: 'Webhook URL not allowed (scheme, credentials, length, private or reserved address).',
  },
  HEADER_NOT_ALLOWED: {
    code: '400-06',
    message: 'Header not allowed (reserved or hop-by-hop name, invalid characters, too many headers).',
  },
  IDEMPOTENCY_KEY_REUSED: { code: '400-07', message: 'Idempotency key reused with a different request.' },
  PAYLOAD_SCHEMA_MISMATCH: { code: '400-08', message: "The payload does not match the event type's schema." },
  FORBIDDEN: { code: '403-00', message: 'The action cannot be performed.' },
  API_KEY_MISSING: { code: '403-01', message: 'Missing API key.' },
  API_KEY_INVALID: { code: '403-02', message: 'Invalid or revoked API key.' },
  APPLICATION_FORBIDDEN: { code: '403-03', message: 'The API key has no access to this application.' },
  SCOPE_REQUIRED: { code: '403-04', message: 'The API key lacks the required scope.' },
  ROUTE_NOT_FOUND: { code: '404-00', message: 'Resource not found.' },
  APPLICATION_NOT_FOUND: { code: '404-01', message: 'Application not found.' },
  WEBHOOK_NOT_CONFIGURED: { code: '404-02', message: 'Webhook not configured for this application.' },
  SUBSCRIPTION_NOT_FOUND: { code: '404-03', message: 'Subscription not found.' },
  ERROR_CODE_NOT_FOUND: { code: '404-04', message: 'Error code not found.' },
  DELIVERY_NOT_FOUND: { code: '404-05', message: 'Delivery or event not found.' },
  ACCOUNT_OR_KEY_NOT_FOUND: { code: '404-06', message: 'Account or API key not found.' },
  OPERATIONAL_WEBHOOK_NOT_CONFIGURED: { code: '404-07', message: 'No operational webhook is configured.' },
  EVENT_TYPE_NOT_FOUND: { code: '404-08', message: 'Event type not found.' },
  METHOD_NOT_ALLOWED: { code: '405-00', message: 'Method not allowed.' },
  CONFLICT: { code: '409-00', message: 'Conflict with the current state of a resource.' },
  REQUEST_TIMEOUT: { code: '408-00', message: 'The request was not received in time.' },
  PAYLOAD_TOO_LARGE: { code: '413-00', message: 'Payload too large.' },
  URI_TOO_LONG: { code: '414-00', message: 'URI too long (a path parameter or the whole URL is over its limit).' },
  UNSUPPORTED_MEDIA_TYPE: {
    code: '415-00',
    message: 'Unsupported media type or encoding (send UTF-8 JSON without a Content-Encoding).',
  },
  HEADERS_TOO_LARGE: { code: '431-00', message: 'Request header fields too large.' },
  TOO_MANY_REQUESTS: { code: '429-00', message: 'Too many requests; retry after the time in Retry-After.' },
  INTERNAL_ERROR: { code: '500-00', message: 'Internal error; it has been logged with the request id.' },
  SERVICE_UNAVAILABLE: {
    code: '503-00',
    message: 'Service unavailable (the database cannot be reached); retry after the time in Retry-After.',
  },
} as const satisfies Record<string, { code: `${number}-${number}`; message: string }>;

export type ErrorKind = keyof typeof ERROR_CATALOGUE;
export type ErrorCode = (typeof ERROR_CATALOGUE)[ErrorKind]['code'];

export interface ErrorCodeEntry {
  code: ErrorCode;
  message: string;
}

/** Every entry, in code order: what `GET /error_codes` lists. */
export const ERROR_DIRECTORY: readonly ErrorCodeEntry[] = Object.values(ERROR_CATALOGUE)
  .map(({ code, message }) => ({ code, message }))
  .sort((a, b) => a.code.localeCompare(b.code));

const entriesByCode = new Map<string, ErrorCodeEntry>(ERROR_DIRECTORY.map((entry) => [entry.code, entry]));

export function findErrorCode(code: string): ErrorCodeEntry | undefined {
  return entriesByCode.get(code);
}

/** The HTTP status an error code answers with: its first three digits. */
export function statusOf(code: ErrorCode): number {
  return Number(code.slice(0, 3));
}
