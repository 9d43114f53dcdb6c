import { AppError } from '@herald/contracts';
import { BadRequestException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { toAppError } from './to-app-error';

describe('toAppError', () => {
  it('passes an AppError through', () => {
    const error = new AppError('SUBSCRIPTION_NOT_FOUND');
    expect(toAppError(error)).toBe(error);
  });

  it.each([
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, '400-01'],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400, '400-01'],
    ['FST_ERR_CTP_INVALID_CONTENT_LENGTH', 400, '400-01'],
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, '413-00'],
  ])('maps Fastify %s to %s', (code, statusCode, expected) => {
    expect(toAppError(Object.assign(new Error('x'), { code, statusCode }))?.code).toBe(expected);
  });

  it.each([
    [new NotFoundException(), '404-00'],
    [new BadRequestException(), '400-00'],
    [new PayloadTooLargeException(), '413-00'],
  ])('maps %p by its status', (exception, code) => {
    expect(toAppError(exception)?.code).toBe(code);
  });

  it.each([
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
    new Error('Connection terminated unexpectedly'),
    new Error('timeout exceeded when trying to connect'),
    Object.assign(new Error('the database system is shutting down'), { code: '57P03' }),
  ])('answers 503-00 with Retry-After when the database is unreachable: %p', (error) => {
    const mapped = toAppError(new Error('query failed', { cause: error }));
    expect(mapped).toMatchObject({ code: '503-00', headers: { 'retry-after': '5' } });
  });

  it('leaves unexpected errors to the caller (500-00)', () => {
    expect(toAppError(new TypeError('undefined is not a function'))).toBeNull();
    expect(toAppError({ statusCode: 500 })).toBeNull();
  });
});
