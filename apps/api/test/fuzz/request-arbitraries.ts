import fc from 'fast-check';

/**
 * fast-check arbitraries for requests to every operation of an OpenAPI document: a route added
 * to the api is fuzzed without anyone listing it. Values are mostly what the schema asks for,
 * often something hostile in its place (control characters, lone surrogates, prototype names,
 * huge numbers, deep nesting), and sometimes not JSON at all.
 */

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** The OpenAPI path template this request was made from, to count what was exercised. */
  operation: string;
}

/** What the fuzzer may plug in where a real value belongs (ids that exist, keys that work). */
export interface FuzzTargets {
  applicationIds: number[];
  keys: string[];
  deliveryIds: string[];
  apiKeyIds: string[];
  accountIds: string[];
}

type Schema = Record<string, any>;
interface Operation {
  method: string;
  template: string;
  pathParameters: { name: string; schema: Schema }[];
  queryParameters: { name: string; schema: Schema }[];
  body?: Schema;
}

/** Routes the document leaves out (they answer without a key) and paths no route has. */
const UNDOCUMENTED: Operation[] = ['/healthz', '/readyz', '/metrics', '/docs-json', '/', '/application', '/admin'].map((template) => ({
  method: 'get',
  template,
  pathParameters: [],
  queryParameters: [],
}));

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'TRACE'];

const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\r\n',
  '\t',
  '\u001b[31m',
  '\u007f',
  '%00',
  '%',
  '%E0%A4%A',
  '%FF',
  '%C0%AF',
  '..',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-1',
  '0',
  '1e309',
  '9'.repeat(30),
  '0x10',
  '1.5',
  '\uFFFF',
  '\uD800',
  '\uDFFF',
  '😀',
  '\u202E',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '$(reboot)',
  'acw_start',
  'webhook.test',
  'dlv_01jd8x6q3m0000000000000000',
  'key_01jd8x7a1b2c3d4e5f6g7h8j9k',
  'acc_01jd8x6q3k2m4n5p6r7s8t9v0w',
  'a'.repeat(300),
  'b'.repeat(5000),
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 24 }) },
);

const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -1, 1, 2147483647, 2147483648, -2147483649, Number.MAX_SAFE_INTEGER, 1e308, 0.5, -0),
  fc.integer(),
  fc.double({ noNaN: true }),
);

/** Keys for any object: every name Object.prototype carries (PRODUCT.md §17), a few real ones, any string. */
const objectKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...Object.getOwnPropertyNames(Object.prototype), 'prototype', 'X-Api-Token', 'url', ''),
  fc.string({ maxLength: 12 }),
);

/** An object with exactly these own keys, `__proto__` included (a literal or assignment would set the prototype). */
export function objectFrom(entries: [string, unknown][]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, value] of entries) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  return object;
}

export const anyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    hostileNumber,
    hostileString,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.array(fc.tuple(objectKey, tie('value')), { maxLength: 4 }).map(objectFrom),
  ),
})).value;

/**
 * JSON Schemas an operator could send as an event type's `schema` (PRODUCT.md §15) that each try
 * one of the ways out of the validator's bounds: a backtracking pattern, references outside the
 * document or looping in place, quadratic uniqueItems, another draft, Ajv's skipped names, depth.
 */
const HOSTILE_JSON_SCHEMAS: Record<string, unknown>[] = [
  { type: 'object', properties: { agent_id: { type: 'string', pattern: '^(a+)+$' } } },
  { type: 'object', patternProperties: { '^(a|a)*$': { type: 'string' } }, propertyNames: { pattern: '(?=x)' } },
  { type: 'object', properties: { a: { $ref: 'http://127.0.0.1:9/schema.json' } } },
  { $ref: 'https://json-schema.org/draft/2020-12/schema' },
  { type: 'object', properties: { x: { $ref: '#/$defs/a' } }, $defs: { a: { $ref: '#/$defs/a' } } },
  { type: 'object', properties: { x: { $ref: '#/$defs/a' } }, $defs: { a: { type: 'object', $ref: '#/$defs/a' } } },
  { type: 'object', additionalProperties: { type: 'array', uniqueItems: true } },
  { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' },
  objectFrom([
    ['type', 'object'],
    [
      'properties',
      objectFrom([
        ['__proto__', { type: 'integer' }],
        ['constructor', {}],
      ]),
    ],
  ]),
  Array.from({ length: 28 }).reduce<Record<string, unknown>>((inner) => ({ not: inner }), { type: 'object' }),
  { type: 'object', properties: { n: { type: 'number', multipleOf: 1e-308 } }, required: ['toString', 'hasOwnProperty'] },
];

/**
 * Subscription filters (PRODUCT.md §14) that each try a way out of the language's bounds: an
 * operator outside the subset, a backtracking pattern, more levels, conditions, `$in` values or
 * bytes than allowed, names Object.prototype carries, malformed paths, operators hidden in a value.
 */
const HOSTILE_FILTERS: Record<string, unknown>[] = [
  { $where: 'sleep(1000)' },
  { 'queue.id': { $regex: '^(a+)+$' } },
  { $expr: { $gt: ['$a', '$b'] } },
  Array.from({ length: 12 }).reduce<Record<string, unknown>>((inner) => ({ $not: inner }), { a: 1 }),
  { tags: { $in: Array.from({ length: 101 }, (_, i) => i) } },
  Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`f${i}`, i])),
  { s: 'x'.repeat(5000) },
  objectFrom([
    ['__proto__', { $gt: 1 }],
    ['constructor.prototype', { $exists: true }],
    ['toString', { $ne: null }],
  ]),
  { $or: [] },
  { $and: [{ a: 1 }, 'b'] },
  { 'a..b': 1, '': 2 },
  { a: { $in: [[[[[[[[1]]]]]]]] } },
  { queue: { id: { $gt: 5 } } },
  { a: { $gt: 1, b: 2 } },
  { n: { $gte: 3 }, $or: [{ vip: true }, { 'tags.0': { $nin: ['x'] } }] },
];

export function operationsOf(document: Schema): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries<Schema>(document.paths)) {
    for (const [method, operation] of Object.entries<Schema>(item)) {
      const parameters: Schema[] = operation.parameters ?? [];
      operations.push({
        method,
        template,
        pathParameters: parameters.filter((p) => p.in === 'path').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        queryParameters: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema ?? {} })),
        body: operation.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return [...operations, ...UNDOCUMENTED];
}

export function requestArbitrary(document: Schema, targets: FuzzTargets): fc.Arbitrary<FuzzRequest> {
  const resolve = (schema: Schema | undefined): Schema => {
    if (!schema) return {};
    if (schema.$ref) return resolve(document.components.schemas[schema.$ref.split('/').pop()]);
    if (schema.allOf?.length === 1) return resolve({ ...schema.allOf[0], ...schema, allOf: undefined });
    return schema;
  };

  /** What the schema asks for: examples, bounds and one past them, known ids. */
  const fitting = (raw: Schema | undefined, depth: number, name = ''): fc.Arbitrary<unknown> => {
    const schema = resolve(raw);
    if (schema.enum) return fc.constantFrom(...schema.enum);
    // An object the document shows as an example (an event type's schema, an example payload) is
    // sent as it is too, so requests get past validation into what the object does.
    if (isObjectSchema(schema) && typeof schema.example === 'object' && schema.example !== null && !Array.isArray(schema.example)) {
      const hostile =
        name === 'schema'
          ? [{ weight: 2, arbitrary: fc.constantFrom(...HOSTILE_JSON_SCHEMAS) }]
          : name === 'filter'
            ? [{ weight: 2, arbitrary: fc.constantFrom(...HOSTILE_FILTERS) }]
            : [];
      return fc.oneof({ weight: 3, arbitrary: fc.constant(schema.example) }, ...hostile, {
        weight: 3,
        arbitrary: fittingObject(schema, depth),
      });
    }
    if (name === 'account_id' && targets.accountIds.length > 0) return fc.constantFrom(...targets.accountIds);
    switch (schema.type) {
      case 'integer':
      case 'number': {
        const bounds = [schema.minimum, schema.maximum, schema.example].filter((v) => typeof v === 'number');
        return fc.oneof(
          fc.constantFrom(...bounds, ...bounds.map((b) => b + 1), ...bounds.map((b) => b - 1), 1),
          fc.integer({ min: -5, max: 100 }),
        );
      }
      case 'boolean':
        return fc.boolean();
      case 'array':
        return fc.array(value(schema.items, depth + 1), { maxLength: 3 });
      case 'object':
      case undefined:
        return fittingObject(schema, depth);
      default: {
        const examples = [schema.example, 'https://example.com/hooks/h', 'acw_start'].filter((v) => typeof v === 'string');
        return fc.oneof(fc.constantFrom(...examples), fc.string({ maxLength: 20 }));
      }
    }
  };
  const isObjectSchema = (schema: Schema): boolean => schema.type === 'object' || schema.type === undefined;
  const fittingObject = (schema: Schema, depth: number): fc.Arbitrary<unknown> => {
    if (depth > 3) return anyJson;
    const properties = Object.entries<Schema>(schema.properties ?? {});
    const known = properties.map(([key, property]) =>
      fc.option(value(property, depth + 1, key), { nil: undefined, freq: 8 }).map((v) => [key, v] as [string, unknown]),
    );
    const extra = schema.additionalProperties
      ? fc.array(fc.tuple(objectKey, value(schema.additionalProperties === true ? {} : schema.additionalProperties, depth + 1)), {
          maxLength: 4,
        })
      : fc.array(fc.tuple(objectKey, anyJson), { maxLength: 1 });
    if (properties.length === 0 && !schema.additionalProperties && schema.type === undefined) return anyJson;
    return fc.tuple(fc.tuple(...known), extra).map(([fields, more]) => objectFrom([...fields.filter(([, v]) => v !== undefined), ...more]));
  };
  const value = (schema: Schema | undefined, depth: number, name = ''): fc.Arbitrary<unknown> =>
    fc.oneof({ weight: 12, arbitrary: fitting(schema, depth, name) }, { weight: 1, arbitrary: anyJson });

  const pathValue = (name: string, schema: Schema): fc.Arbitrary<string> => {
    const known: string[] =
      name === 'application_id'
        ? targets.applicationIds.map(String)
        : name === 'delivery_id'
          ? targets.deliveryIds
          : name === 'id'
            ? targets.apiKeyIds
            : name === 'subscription'
              ? ['acw_start', 'voice_campaign_activate', 'webhook.test']
              : name === 'code'
                ? ['400-01', '404-04', '999-99']
                : [String(schema.example ?? 'x')];
    return fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...known).map(encodeURIComponent) },
      { weight: 2, arbitrary: hostileString.map(encodePathPart) },
      { weight: 1, arbitrary: fc.constantFrom('%E0%A4%A', '%FF', '%', '%00', 'a%2Fb', '.', 'x'.repeat(1100)) },
    );
  };

  const bodyText: (schema: Schema | undefined) => fc.Arbitrary<string | Buffer | undefined> = (schema) =>
    fc.oneof(
      { weight: schema ? 6 : 1, arbitrary: value(schema, 0).map((v) => JSON.stringify(v) ?? 'null') },
      { weight: schema ? 1 : 6, arbitrary: fc.constant(undefined) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '{',
          '{"a":',
          '[]',
          'null',
          '"x"',
          '{"a":1}{',
          'not json',
          '\u0000',
          `{"x":${'['.repeat(40)}${']'.repeat(40)}}`,
        ),
      },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
      // Bytes no string encodes: invalid UTF-8, a byte-order mark, Latin-1.
      { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          Buffer.from('\ufeff{}'),
          Buffer.from('{"name":"caf\xe9"}', 'latin1'),
          Buffer.from([0x7b, 0xc0, 0x80, 0x7d]),
        ),
      },
    );

  const headerValue = fc.stringMatching(/^[\x20-\x7e]{0,40}$/);
  /** Present in about one request of `freq`. */
  const sometimes = <T>(arbitrary: fc.Arbitrary<T>, freq: number) =>
    fc.oneof({ weight: freq - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arbitrary });
  const headers = fc
    .record({
      authorization: fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom(...targets.keys, ...targets.keys.map((key) => `Bearer ${key}`)) },
        { weight: 1, arbitrary: headerValue },
        { weight: 1, arbitrary: fc.constant(undefined) },
      ),
      'content-type': fc.oneof(
        { weight: 12, arbitrary: fc.constant('application/json') },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            'application/json; charset=utf-8',
            'application/json; charset=utf-16',
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/json; charset=',
            'multipart/form-data; boundary=x',
          ),
        },
        { weight: 1, arbitrary: headerValue },
      ),
      'content-encoding': sometimes(fc.constantFrom('gzip', 'identity', 'br', 'x'), 15),
      'x-request-id': sometimes(headerValue, 5),
      accept: sometimes(fc.constantFrom('application/json', 'text/html', '*/*', ''), 5),
    })
    .map((all) => Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<string, string>);

  return fc.constantFrom(...operationsOf(document)).chain((operation) =>
    fc
      .record({
        method: fc.oneof(
          { weight: 8, arbitrary: fc.constant(operation.method.toUpperCase()) },
          { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
        ),
        pathValues: fc.tuple(...operation.pathParameters.map((p) => pathValue(p.name, p.schema))),
        query: fc.array(
          fc.oneof(
            ...operation.queryParameters.map((p) => fc.tuple(fc.constant(p.name), value(p.schema, 0).map(asQueryValue))),
            fc.tuple(fc.oneof(objectKey, fc.constantFrom('limit', 'cursor')), hostileString),
          ),
          { maxLength: operation.queryParameters.length > 0 ? 4 : 1 },
        ),
        headers,
        body: bodyText(operation.body),
      })
      .map(({ method, pathValues, query, headers: chosen, body }) => {
        let path = operation.template;
        operation.pathParameters.forEach((parameter, index) => (path = path.replace(`{${parameter.name}}`, pathValues[index])));
        const search = query.map(([key, v]) => `${encodePathPart(key)}=${encodePathPart(v)}`).join('&');
        return {
          method,
          path: search ? `${path}?${search}` : path,
          headers: chosen,
          body,
          operation: `${operation.method.toUpperCase()} ${operation.template}`,
        };
      }),
  );
}

/** A query value as a client would write it (String() throws on an object whose toString is data). */
function asQueryValue(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** Percent-encodes like a client would; a lone surrogate (which cannot be encoded) becomes a bad escape. */
function encodePathPart(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}
