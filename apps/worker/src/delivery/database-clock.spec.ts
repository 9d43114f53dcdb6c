import { DatabaseClock } from './database-clock';

describe('DatabaseClock', () => {
  // The database's clock is 5,000 ms ahead of this process's in every case here.
  const AHEAD = 5_000;

  it('maps database time to local time with the best sample: a late-read answer does not move it later', () => {
    const clock = new DatabaseClock();
    clock.observe(1_000 + AHEAD, 1_000.4); // read 0.4 ms after the database answered
    clock.observe(1_050 + AHEAD, 1_200); // read 150 ms late: the process was descheduled
    // The late sample alone would put this slot at 1,450: 150 ms late, crowding the next ones.
    // With the earlier one it is off by that one's 0.4 ms and 2 ms of sinking over 200 ms.
    expect(clock.toLocal(1_300 + AHEAD)).toBeGreaterThanOrEqual(1_300);
    expect(clock.toLocal(1_300 + AHEAD)).toBeLessThan(1_303);
  });

  it('never maps a slot earlier than it is, whatever the delays', () => {
    const clock = new DatabaseClock();
    for (const [answeredAt, delay] of [
      [0, 3],
      [40, 0.2],
      [90, 80],
      [130, 1],
    ]) {
      clock.observe(answeredAt + AHEAD, answeredAt + delay);
      expect(clock.toLocal(10_000 + AHEAD)).toBeGreaterThanOrEqual(10_000);
    }
  });

  it('follows a clock that drifts, sinking between samples faster than NTP lets clocks drift', () => {
    const clock = new DatabaseClock();
    clock.observe(0 + AHEAD, 0.1);
    // This process's clock now runs 1 ms/s fast against the database's: the offset shrinks.
    clock.observe(10_000 + AHEAD, 10_010.1);
    expect(clock.toLocal(10_000 + AHEAD)).toBeGreaterThanOrEqual(10_010);
    expect(clock.toLocal(10_000 + AHEAD)).toBeLessThan(10_011);
  });

  it('refuses to map before it has a sample', () => {
    expect(() => new DatabaseClock().toLocal(1)).toThrow('before any sample');
  });
});
