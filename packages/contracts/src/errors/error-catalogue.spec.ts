import { AppError } from './app-error';
import { ERROR_CATALOGUE, ERROR_DIRECTORY, findErrorCode, statusOf } from './error-catalogue';

describe('the error catalogue', () => {
  const entries = Object.values(ERROR_CATALOGUE);

  it('has unique codes of the shape NNN-NN, each with a message', () => {
    expect(new Set(entries.map((e) => e.code)).size).toBe(entries.length);
    for (const entry of entries) {
      expect(entry.code).toMatch(/^\d{3}-\d{2}$/);
      expect(entry.message.length).toBeGreaterThan(5);
    }
  });

  it('contains the starting directory of PRODUCT.md §2, the codes §15 adds and the seed entries', () => {
    const codes = entries.map((e) => e.code);
    expect(codes).toEqual(
      expect.arrayContaining([
        '400-00',
        '400-01',
        '400-02',
        '400-03',
        '400-04',
        '400-05',
        '400-06',
        '400-07',
        '400-08',
        '403-00',
        '403-01',
        '403-02',
        '403-03',
        '403-04',
        '404-00',
        '404-01',
        '404-02',
        '404-03',
        '404-04',
        '404-05',
        '404-06',
        '404-08',
        '405-00',
        '409-00',
        '413-00',
        '429-00',
        '500-00',
        '503-00',
      ]),
    );
    expect(findErrorCode('400-01')?.message).toMatch(/no body|not a JSON/i);
    expect(findErrorCode('400-00')?.message).toMatch(/bad request/i);
  });

  it('uses only HTTP error statuses, read from the code', () => {
    for (const entry of entries) {
      const status = statusOf(entry.code);
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
    }
  });

  it('serves the directory in code order and finds only listed codes', () => {
    expect(ERROR_DIRECTORY.map((e) => e.code)).toEqual(entries.map((e) => e.code).sort());
    expect(findErrorCode('999-99')).toBeUndefined();
    expect(findErrorCode('400-1')).toBeUndefined();
  });

  it('AppError takes its status from the catalogue and its message from the thrower or the directory', () => {
    const plain = new AppError('APPLICATION_NOT_FOUND');
    expect(plain).toMatchObject({ code: '404-01', status: 404, message: ERROR_CATALOGUE.APPLICATION_NOT_FOUND.message });
    const specific = new AppError('TOO_MANY_REQUESTS', 'slow down', { headers: { 'retry-after': '1' } });
    expect(specific).toMatchObject({ code: '429-00', status: 429, message: 'slow down', headers: { 'retry-after': '1' } });
  });
});
