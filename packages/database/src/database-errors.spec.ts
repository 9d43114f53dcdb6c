import { classifyDatabaseError } from './database-errors';
import { Prisma } from './generated/prisma/client';

const known = (code: string, meta?: Record<string, unknown>) =>
  new Prisma.PrismaClientKnownRequestError('failed', { code, clientVersion: '7.10.1', meta });

describe('classifyDatabaseError', () => {
  it.each([
    [known('P2002'), 'unique_violation'],
    [known('P2003'), 'foreign_key_violation'],
    [known('P1001'), 'unavailable'],
    [known('P2010', { driverAdapterError: { cause: { kind: 'UniqueConstraintViolation' } } }), 'unique_violation'],
    [known('P2010', { driverAdapterError: { cause: { kind: 'ForeignKeyConstraintViolation' } } }), 'foreign_key_violation'],
    [known('P2010', { driverAdapterError: { cause: { kind: 'DatabaseNotReachable' } } }), 'unavailable'],
    [known('P2010', { driverAdapterError: { cause: { kind: 'SyntaxError' } } }), 'other'],
  ])('reads Prisma errors: %s', (error, kind) => {
    expect(classifyDatabaseError(error)).toBe(kind);
  });

  it.each([
    [{ code: '23505' }, 'unique_violation'],
    [{ code: '23503' }, 'foreign_key_violation'],
    [{ code: 'ECONNREFUSED' }, 'unavailable'],
    [{ code: '08006' }, 'unavailable'],
    [{ code: '57P01' }, 'unavailable'],
    [new Error('Connection terminated unexpectedly'), 'unavailable'],
    [new Error('timeout exceeded when trying to connect'), 'unavailable'],
    [{ code: '42P01' }, 'other'],
    [new Error('something else'), 'other'],
    [null, 'other'],
  ])('reads pg errors: %p', (error, kind) => {
    expect(classifyDatabaseError(error)).toBe(kind);
  });

  it('follows the cause chain', () => {
    const wrapped = new Error('query failed', { cause: new Error('x', { cause: { code: 'ECONNRESET' } }) });
    expect(classifyDatabaseError(wrapped)).toBe('unavailable');
  });

  it('survives a cause cycle', () => {
    const a: { cause?: unknown; message: string } = { message: 'a' };
    a.cause = { message: 'b', cause: a };
    expect(classifyDatabaseError(a)).toBe('other');
  });
});
