/**
 * What an attempt's log keeps of the headers it sent (PRODUCT.md §5.3, §7). A signed webhook's
 * request starts with `content-type: application/json` and has `webhook-id` (the event's id) and
 * `webhook-timestamp` (the attempt's start, in seconds) just before `webhook-signature`: all three
 * say again what the attempt's row and its delivery hold. The log leaves them out, about 110
 * bytes of each attempt's row and of its WAL (bench storage; bench/README.md, "Issue 20, fifth
 * sitting"), and `sentRequestHeaders` puts them back where they were, so the API shows exactly
 * the headers sent.
 *
 * Only a request laid out that way is shortened; any other is kept as sent. A shortened log is
 * the one with a `webhook-signature` and neither a `content-type` nor a `webhook-id`: every request
 * Herald sends has both (its body is JSON, and the transport sets them before the receiver's own
 * headers can change their values), so a log kept as sent is never read as a shortened one.
 */

const CONTENT_TYPE = ['content-type', 'application/json'] as const;
const ID = 'webhook-id';
const TIMESTAMP = 'webhook-timestamp';
const SIGNATURE = 'webhook-signature';

/** The `webhook-timestamp` of an attempt started at `startedAt`. */
export function webhookTimestamp(startedAt: Date): string {
  return String(Math.floor(startedAt.getTime() / 1000));
}

/** The headers an attempt's log stores, of those it sent for the event `eventId` at `startedAt`. */
export function loggedRequestHeaders(sent: Record<string, string>, eventId: string, startedAt: Date): Record<string, string> {
  const entries = Object.entries(sent);
  const signatureAt = entries.findIndex(([name]) => name === SIGNATURE);
  const laidOut =
    signatureAt >= 3 &&
    entries[0][0] === CONTENT_TYPE[0] &&
    entries[0][1] === CONTENT_TYPE[1] &&
    entries[signatureAt - 2][0] === ID &&
    entries[signatureAt - 2][1] === eventId &&
    entries[signatureAt - 1][0] === TIMESTAMP &&
    entries[signatureAt - 1][1] === webhookTimestamp(startedAt);
  if (!laidOut) return sent;
  return Object.fromEntries([...entries.slice(1, signatureAt - 2), ...entries.slice(signatureAt)]);
}

/** The headers an attempt sent, from its log (loggedRequestHeaders) and what its row says. */
export function sentRequestHeaders(logged: Record<string, string>, eventId: string, startedAt: Date): Record<string, string> {
  if (!(SIGNATURE in logged) || ID in logged || CONTENT_TYPE[0] in logged) return logged;
  const entries = Object.entries(logged);
  const signatureAt = entries.findIndex(([name]) => name === SIGNATURE);
  return Object.fromEntries([
    CONTENT_TYPE,
    ...entries.slice(0, signatureAt),
    [ID, eventId],
    [TIMESTAMP, webhookTimestamp(startedAt)],
    ...entries.slice(signatureAt),
  ]);
}
