import { AppError } from '@herald/contracts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage, Server } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorEnvelope } from '../errors/error-envelope';
import { bodyLimitFor } from './body-limits';
import { newRequestId, REQUEST_ID_HEADER } from './request-id';

/**
 * Answers for what goes wrong before a route runs — in Node's HTTP parser, in Fastify's router,
 * or in the request line itself — with the same envelope and directory codes as every other
 * error (PRODUCT §2). Fastify's own answers for these are bare `{"statusCode":400}` bodies.
 */

/** The whole URL (path and query). Node refuses a request head over 16 KiB as 431 before this. */
export const MAX_URL_LENGTH = 8 * 1024;
/** One path parameter. Ids are 30 characters; 1 KiB leaves every route its own 404 for junk. */
export const MAX_PATH_PARAMETER_LENGTH = 1024;

/** Errors from Node's HTTP parser (`clientError`): the connection cannot carry a normal reply. */
export function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const kind =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? 'HEADERS_TOO_LARGE'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'REQUEST_TIMEOUT'
        : 'BAD_REQUEST';
  const message =
    kind === 'HEADERS_TOO_LARGE'
      ? 'The request line and headers together are larger than 16 KiB.'
      : kind === 'REQUEST_TIMEOUT'
        ? 'The request was not received in time.'
        : `The request is not valid HTTP/1.1 (${error.code ?? 'parse error'}).`;
  const requestId = newRequestId();
  this.log.warn({ requestId, code: error.code }, 'refused a request the HTTP parser could not read');
  writeRawError(socket, new AppError(kind, message), requestId);
  socket.destroy();
}

/** CONNECT never reaches Fastify's router: Node hands it to a `connect` listener or drops it. */
export function answerConnectRequests(server: Server, fastify: FastifyInstance): void {
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    const requestId = newRequestId();
    fastify.log.warn({ requestId, method: 'CONNECT' }, 'refused a CONNECT request');
    writeRawError(socket, new AppError('METHOD_NOT_ALLOWED', 'CONNECT is not supported: Herald is not a proxy.'), requestId);
    socket.end();
  });
}

/** Fastify's router errors: a path it cannot decode, or a parameter over its length. */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const appError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new AppError('URI_TOO_LONG', `A path segment is longer than ${MAX_PATH_PARAMETER_LENGTH} characters.`)
      : error.code === 'FST_ERR_BAD_URL'
        ? new AppError('INVALID_PARAMETER', 'The path has invalid percent-encoding (each % must start a UTF-8 escape such as %2F).')
        : new AppError('BAD_REQUEST', 'The request could not be routed.');
  // Routing failed, so no onRequest hook ran: the request id header is set here.
  void reply
    .status(appError.status)
    .header(REQUEST_ID_HEADER, request.id)
    .send(errorEnvelope(appError, String(request.id)));
}

/**
 * What a request line must satisfy before routing: HTTP/1.1 names its Host (Node's own check
 * answers without a body, so it is off and done here), the URL fits, and the query string's
 * percent-encoding decodes (Fastify's query parser keeps bad escapes as they are).
 */
export function requestLineProblem(request: FastifyRequest): AppError | null {
  if (request.raw.httpVersion === '1.1' && !request.headers.host) {
    return new AppError('BAD_REQUEST', 'An HTTP/1.1 request must carry a Host header.');
  }
  const url = request.raw.url ?? '';
  if (url.length > MAX_URL_LENGTH) return new AppError('URI_TOO_LONG', `The URL is longer than ${MAX_URL_LENGTH} characters.`);
  const queryStart = url.indexOf('?');
  if (queryStart >= 0 && url.includes('%', queryStart) && !decodes(url.slice(queryStart + 1))) {
    return new AppError(
      'INVALID_PARAMETER',
      'The query string has invalid percent-encoding (each % must start a UTF-8 escape such as %2F).',
    );
  }
  // A declared length over the route's own limit is refused before a byte of the body is read
  // (the parser reads up to the largest limit of any route, a batch's 5 MiB).
  const limit = bodyLimitFor(request.routeOptions?.url);
  if (Number(request.headers['content-length']) > limit) {
    return new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`);
  }
  return null;
}

function decodes(query: string): boolean {
  try {
    decodeURIComponent(query.replace(/\+/g, ' '));
    return true;
  } catch {
    return false;
  }
}

function writeRawError(socket: Duplex, error: AppError, requestId: string): void {
  if (!socket.writable) return;
  const body = JSON.stringify(errorEnvelope(error, requestId));
  socket.write(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `${REQUEST_ID_HEADER}: ${requestId}\r\n` +
      'connection: close\r\n\r\n' +
      body,
  );
}
