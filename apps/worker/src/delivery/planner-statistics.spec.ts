import { PlannerStatisticsPolicy } from './planner-statistics';

describe('PlannerStatisticsPolicy', () => {
  const { SLOW_CLAIM_MS, INTERVAL_MS } = PlannerStatisticsPolicy;

  it('refreshes as the first deliveries grow the tables: at 1,000 claimed, 2,000, 4,000… up to 64,000', () => {
    const policy = new PlannerStatisticsPolicy();
    const refreshedAt: number[] = [];
    let claimed = 0;
    let now = 0;
    // 50 a claim, one every 10 ms.
    while (claimed < 200_000) {
      claimed += 50;
      now += 10;
      if (policy.observeClaim(2, 50, now)) refreshedAt.push(claimed);
    }
    expect(refreshedAt).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000]);
  });

  it('refreshes after a slow claim, and never more often than every ten seconds', () => {
    const policy = new PlannerStatisticsPolicy();
    expect(policy.observeClaim(SLOW_CLAIM_MS - 1, 1, 0)).toBe(false);
    expect(policy.observeClaim(SLOW_CLAIM_MS, 1, 1)).toBe(true);
    expect(policy.observeClaim(500, 1, 1 + INTERVAL_MS - 1)).toBe(false);
    expect(policy.observeClaim(500, 1, 1 + INTERVAL_MS)).toBe(true);
  });

  it('refreshes at a growth mark whenever it passes, and counts marks passed together once', () => {
    const policy = new PlannerStatisticsPolicy();
    expect(policy.observeClaim(1, 1_000, 0)).toBe(true);
    expect(policy.observeClaim(1, 999, 1)).toBe(false);
    // 2,000 and 4,000 at once: one refresh, at once.
    expect(policy.observeClaim(1, 3_001, 2)).toBe(true);
    expect(policy.observeClaim(1, 2_999, 3)).toBe(false);
    expect(policy.observeClaim(1, 1, 4)).toBe(true);
  });
});
