import 'reflect-metadata';
import { AppError, PublishEventBatchRequest, PublishEventRequest } from '@herald/contracts';
import fc from 'fast-check';
import { anyJson, hostileString, objectFrom } from '../../test/fuzz/request-arbitraries';
import { BodyAcceptor } from '../common/http/direct-routes';
import { RequestValidationPipe } from '../common/validation/request-validation.pipe';
import { acceptPublishBatchBody, acceptPublishBody } from './publish-routes';

const pipe = new RequestValidationPipe();

/** What the DTO's validation makes of a body: its instance, or the error it answers. */
function viaDto(body: unknown, metatype: new () => unknown): { instance: unknown } | { error: AppError } {
  try {
    return { instance: pipe.transform(body, { type: 'body', metatype }) };
  } catch (error) {
    if (error instanceof AppError) return { error };
    throw error;
  }
}

/** The body as the api receives it: JSON text parsed (an own `__proto__` key stays one). */
const asParsed = (body: unknown): unknown => JSON.parse(JSON.stringify(body) ?? 'null');

const eventName = fc.oneof(fc.constantFrom('acw_start', 'voice_campaign_activate', 'a'.repeat(64), 'a'.repeat(65), ''), hostileString);
const key = fc.oneof(
  fc.constantFrom('call-c-9001-acw', 'k'.repeat(255), 'k'.repeat(256), 'ключ', '😀', '\uFE0F', 'a\u0000'),
  hostileString,
);
const fieldValue = (good: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 8, arbitrary: good }, { weight: 1, arbitrary: anyJson }, { weight: 1, arbitrary: fc.constant(null) });
/** Missing one time in `missingOneIn`. */
const present = <T>(value: fc.Arbitrary<T>, missingOneIn: number) => fc.option(value, { freq: missingOneIn, nil: undefined });

/** Mostly publish-shaped bodies, each field now and then wrong in one of the ways a client gets it wrong. */
const publishShaped: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    event: present(fieldValue(eventName), 10),
    payload: present(fieldValue(fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 4 })), 10),
    idempotency_key: present(fieldValue(key), 2),
    ordering_key: present(fieldValue(key), 2),
    extra: present(fc.tuple(fc.constantFrom('__proto__', 'constructor', 'toString', 'url', 'Event', 'payload '), anyJson), 2),
  })
  .map(({ extra, ...fields }) =>
    objectFrom([...Object.entries(fields).filter(([, value]) => value !== undefined), ...(extra ? [extra] : [])]),
  );

const anyBody = fc.oneof({ weight: 6, arbitrary: publishShaped }, { weight: 1, arbitrary: anyJson });

/** The property: whatever the compiled check takes, the DTO takes too, as the same instance. */
function expectAgreement<Body>(accept: BodyAcceptor<Body>, metatype: new () => Body, body: unknown): boolean {
  const parsed = asParsed(body);
  const fast = accept(parsed);
  if (fast === null) return false;
  const slow = viaDto(asParsed(body), metatype);
  expect(slow).toEqual({ instance: fast });
  expect(fast).toBeInstanceOf(metatype);
  return true;
}

describe('publish bodies: the compiled check against the DTO', () => {
  it('takes only single publishes the DTO takes, as the same instance', () => {
    let taken = 0;
    fc.assert(
      fc.property(anyBody, (body) => {
        if (expectAgreement(acceptPublishBody, PublishEventRequest, body)) taken++;
      }),
      { numRuns: 3000 },
    );
    // The property says nothing if the check takes nothing: it must take a good share of these.
    expect(taken).toBeGreaterThan(100);
  });

  it('takes only batches the DTO takes, their events as the same instances', () => {
    let taken = 0;
    const wellFormed = publishShaped.filter((body) => acceptPublishBody(asParsed(body)) !== null);
    const batch = fc.oneof(
      fc.record({ events: fc.array(wellFormed, { minLength: 0, maxLength: 4 }) }),
      fc.record({ events: fc.tuple(fc.array(wellFormed, { maxLength: 3 }), publishShaped).map(([good, any]) => [...good, any]) }),
      fc.record({ events: fc.array(publishShaped, { minLength: 0, maxLength: 4 }) }),
      fc.record({
        events: fc.array(
          publishShaped.filter((body) => 'event' in body && 'payload' in body),
          { maxLength: 3 },
        ),
        extra: anyJson,
      }),
      anyJson,
    );
    fc.assert(
      fc.property(batch, (body) => {
        if (expectAgreement(acceptPublishBatchBody, PublishEventBatchRequest, body)) taken++;
      }),
      { numRuns: 2000 },
    );
    expect(taken).toBeGreaterThan(200);
  });

  it('takes the bodies platforms send, with and without keys', () => {
    const bodies = [
      { event: 'acw_start', payload: { agent_id: 'a-17', call_id: 'c-9001' } },
      { event: 'acw_start', payload: {}, idempotency_key: 'call-c-9001-acw', ordering_key: 'call-c-9001' },
      { event: 'voice_campaign_activate', payload: { nested: { deep: [1, 'two', null] }, ctl: 'tab\there' } },
    ];
    for (const body of bodies) expect(expectAgreement(acceptPublishBody, PublishEventRequest, body)).toBe(true);
    expect(expectAgreement(acceptPublishBatchBody, PublishEventBatchRequest, { events: bodies })).toBe(true);
  });

  it('leaves what it cannot vouch for to the DTO, which still answers with its own error', () => {
    const refused: [unknown, string][] = [
      [{ event: 'acw_start' }, '400-02'],
      [{ event: 'acw_start', payload: [] }, '400-02'],
      [{ event: 'acw_start', payload: {}, idempotency_key: '' }, '400-02'],
      [{ event: 'acw_start', payload: {}, ordering_key: 'a\u0001' }, '400-02'],
      [{ event: 'a'.repeat(65), payload: {} }, '400-02'],
      [
        objectFrom([
          ['event', 'acw_start'],
          ['payload', {}],
          ['__proto__', {}],
        ]),
        '400-02',
      ],
    ];
    for (const [body, code] of refused) {
      expect(acceptPublishBody(asParsed(body))).toBeNull();
      expect(viaDto(asParsed(body), PublishEventRequest)).toEqual({ error: expect.objectContaining({ code }) });
    }
    // Valid, but outside printable ASCII: the DTO takes it.
    const unicode = { event: 'acw_start', payload: {}, idempotency_key: 'ключ-😀' };
    expect(acceptPublishBody(asParsed(unicode))).toBeNull();
    expect(viaDto(asParsed(unicode), PublishEventRequest)).toEqual({ instance: expect.objectContaining(unicode) });
  });
});
