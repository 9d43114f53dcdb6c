import { idempotencyRequestHash, repeatedKeyOutcome } from './idempotency';

describe('idempotent publishing', () => {
  it('hashes the event name and payload, so the same request hashes alike and any change differs', () => {
    const first = idempotencyRequestHash('acw_start', { call: 'c-1', seconds: 30 });
    expect(idempotencyRequestHash('acw_start', { call: 'c-1', seconds: 30 })).toBe(first);
    expect(idempotencyRequestHash('acw_end', { call: 'c-1', seconds: 30 })).not.toBe(first);
    expect(idempotencyRequestHash('acw_start', { call: 'c-1', seconds: 31 })).not.toBe(first);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
  });

  it('replays the first answer for the same request under a taken key, and refuses another request', () => {
    const hash = idempotencyRequestHash('acw_start', { n: 1 });
    expect(repeatedKeyOutcome(hash, hash)).toBe('replay');
    expect(repeatedKeyOutcome(hash, idempotencyRequestHash('acw_start', { n: 2 }))).toBe('key_reused');
  });
});
