import { findErrorCode } from '@herald/contracts';
import type { Response } from 'supertest';

/**
 * Asserts the PRODUCT.md §2 envelope: the status, a directory code whose NNN is that status,
 * a message, and the request id also sent as X-Request-Id.
 */
export function expectError(res: Response, status: number, code: string): void {
  if (res.status !== status || res.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
  expect(res.body).toEqual({
    success: false,
    error: expect.objectContaining({ code, message: expect.any(String) }),
    request_id: expect.any(String),
  });
  expect(Object.keys(res.body.error).every((key) => ['code', 'message', 'details'].includes(key))).toBe(true);
  expect(findErrorCode(code)).toBeDefined();
  expect(code.slice(0, 3)).toBe(String(status));
  expect(res.body.request_id).toBe(res.headers['x-request-id']);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
}

/** The `field`s named in an error's details. */
export function detailFields(res: Response): string[] {
  return (res.body.error.details ?? []).map((detail: { field: string }) => detail.field);
}
