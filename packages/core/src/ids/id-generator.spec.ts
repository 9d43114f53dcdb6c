import { bufferedRandom, UlidIdGenerator } from './id-generator';

describe('UlidIdGenerator', () => {
  it('makes prefixed lowercase ULIDs that sort by creation, even within one millisecond', () => {
    const ids = new UlidIdGenerator(() => 1_800_000_000_000);
    const made = Array.from({ length: 50 }, () => ids.next('evt'));
    for (const id of made) expect(id).toMatch(/^evt_[0-9a-hjkmnp-tv-z]{26}$/);
    expect([...made].sort()).toEqual(made);
    expect(new Set(made).size).toBe(50);
  });

  it('orders ids by the injected clock', () => {
    let now = 1_800_000_000_000;
    const ids = new UlidIdGenerator(() => now);
    const first = ids.next('dlv');
    now += 1;
    expect(ids.next('dlv') > first).toBe(true);
  });
});

describe('bufferedRandom', () => {
  it('gives values in [0, 1] from fresh random bytes, refilling when its buffer runs out', () => {
    const random = bufferedRandom(16);
    const values = Array.from({ length: 16 * 64 }, () => random());
    for (const value of values) {
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThanOrEqual(1);
      expect(Number.isInteger(value * 0xff)).toBe(true);
    }
    // 64 refills of 16 bytes: a stuck or repeating buffer would show as repeated blocks.
    const blocks = new Set(Array.from({ length: 64 }, (_, i) => values.slice(i * 16, i * 16 + 16).join(',')));
    expect(blocks.size).toBe(64);
    expect(new Set(values).size).toBeGreaterThan(200);
  });
});
