import { firstIdAt, UlidIdGenerator } from './id-generator';

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

  it('firstIdAt bounds from below every id made at that time or later, and no earlier one', () => {
    let now = 1_800_000_000_000;
    const ids = new UlidIdGenerator(() => now);
    const earlier = ids.next('dlv');
    now += 1;
    const bound = firstIdAt('dlv', new Date(now));
    const made = Array.from({ length: 20 }, () => ids.next('dlv'));
    now += 60_000;
    made.push(ids.next('dlv'));
    expect(earlier < bound).toBe(true);
    for (const id of made) expect(id >= bound).toBe(true);
  });
});
