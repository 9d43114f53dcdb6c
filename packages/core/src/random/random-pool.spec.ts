import { RandomPool } from './random-pool';

describe('RandomPool', () => {
  it('never hands out the same bytes twice, across refills', () => {
    const pool = new RandomPool(64);
    const chunks = Array.from({ length: 200 }, () => pool.bytes(24).toString('hex'));
    expect(chunks.every((chunk) => chunk.length === 48)).toBe(true);
    // 200 × 24 bytes from a 64-byte buffer: dozens of refills; any reuse would repeat a chunk.
    expect(new Set(chunks).size).toBe(200);
  });

  it('gives copies, so a caller keeping its bytes is not changed by the next refill', () => {
    const pool = new RandomPool(32);
    const kept = pool.bytes(32);
    const before = kept.toString('hex');
    pool.bytes(32);
    expect(kept.toString('hex')).toBe(before);
  });

  it('serves requests larger than the pool directly', () => {
    expect(new RandomPool(16).bytes(100)).toHaveLength(100);
  });

  it('gives units in [0, 1] that are whole multiples of 1/255', () => {
    const pool = new RandomPool(16);
    const units = Array.from({ length: 16 * 64 }, () => pool.unit());
    for (const unit of units) {
      expect(unit).toBeGreaterThanOrEqual(0);
      expect(unit).toBeLessThanOrEqual(1);
      expect(Number.isInteger(Math.round(unit * 0xff * 1e6) / 1e6)).toBe(true);
    }
    expect(new Set(units).size).toBeGreaterThan(200);
  });
});
