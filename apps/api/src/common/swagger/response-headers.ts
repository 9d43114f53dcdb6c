import { ERROR_CATALOGUE, ErrorResponse } from '@herald/contracts';
import type { HeaderObject, OpenAPIObject, ResponseObject } from '@nestjs/swagger';

/**
 * The headers Herald sets on answers, wherever they occur: written into the document once, after
 * Nest has built it, so no route can forget them. X-Request-Id is on every answer (the onRequest
 * hook, the exception filter and the raw socket writer all set it); Retry-After on every 429 and
 * 503 (the rate limiter, /readyz and the exception filter); Allow on every 405.
 */
export const RESPONSE_HEADERS = {
  'X-Request-Id': {
    description:
      "The request's id: the caller's own X-Request-Id when it is 1 to 128 of A-Z a-z 0-9 . _ : -, otherwise one Herald made. " +
      'Error bodies repeat it as `request_id`, and the log line of the request carries it.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$', example: 'req_3b241101e2bb4255' },
  },
  'Retry-After': {
    description: 'Whole seconds to wait before trying again.',
    schema: { type: 'integer', minimum: 1, example: 5 },
  },
  Allow: {
    description: 'The methods the path answers to, comma-separated.',
    schema: { type: 'string', example: 'DELETE, GET, HEAD, PUT' },
  },
} satisfies Record<string, HeaderObject>;

type HeaderName = keyof typeof RESPONSE_HEADERS;

/** Answered for any method a path does not take, and for CONNECT anywhere; it cannot be listed under the operations. */
export const METHOD_NOT_ALLOWED_RESPONSE = 'MethodNotAllowed';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function headersFor(status: string): HeaderName[] {
  return [
    'X-Request-Id',
    ...(status === '429' || status === '503' ? (['Retry-After'] as const) : []),
    ...(status === '405' ? (['Allow'] as const) : []),
  ];
}

/** Adds the headers to every response of every operation, and the 405 every path can answer. */
export function documentResponseHeaders(document: OpenAPIObject): OpenAPIObject {
  const withHeaders = (status: string, response: ResponseObject): ResponseObject => ({
    ...response,
    headers: {
      ...response.headers,
      ...Object.fromEntries(headersFor(status).map((name) => [name, { $ref: `#/components/headers/${name}` }])),
    },
  });
  const paths = Object.fromEntries(
    Object.entries(document.paths).map(([path, item]) => {
      const operations = METHODS.filter((method) => item[method]).map((method) => {
        const operation = item[method]!;
        const responses = Object.fromEntries(
          Object.entries(operation.responses).map(([status, response]) => [status, withHeaders(status, response as ResponseObject)]),
        );
        return [method, { ...operation, responses }];
      });
      return [path, { ...item, ...Object.fromEntries(operations) }];
    }),
  );
  const { code, message } = ERROR_CATALOGUE.METHOD_NOT_ALLOWED;
  return {
    ...document,
    paths,
    components: {
      ...document.components,
      headers: { ...document.components?.headers, ...RESPONSE_HEADERS },
      responses: {
        ...document.components?.responses,
        [METHOD_NOT_ALLOWED_RESPONSE]: withHeaders('405', {
          description:
            `\`${code}\` ${message} Any method a path above does not list (and CONNECT, on any path) is answered 405 ` +
            'with Allow naming the methods the path takes.',
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${ErrorResponse.name}` } } },
        }),
      },
    },
  };
}
