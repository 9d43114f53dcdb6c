import { PlannerStatisticsPolicy } from './planner-statistics';

/** The tables a refresh covers, or null: what most of these tests follow. */
const scopeOf = (policy: PlannerStatisticsPolicy, claimMs: number, claimedRows: number, nowMs: number) =>
  policy.observeClaim(claimMs, claimedRows, nowMs)?.scope ?? null;

describe('PlannerStatisticsPolicy', () => {
  const { SLOW_CLAIM_MS, INTERVAL_MS, ALL_TABLES_INTERVAL_MS } = PlannerStatisticsPolicy;

  it("refreshes the queue's statistics as the first deliveries grow it: at 1,000 claimed, 2,000, 4,000… up to 64,000", () => {
    const policy = new PlannerStatisticsPolicy();
    const refreshedAt: [number, string][] = [];
    let claimed = 0;
    let now = 0;
    // 50 a claim, one every millisecond: the ten-second refresh never comes due.
    while (claimed < 200_000) {
      claimed += 50;
      now += 1;
      const scope = scopeOf(policy, 2, 50, now);
      if (scope) refreshedAt.push([claimed, scope]);
    }
    expect(refreshedAt).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000].map((mark) => [mark, 'queue']));
  });

  it("refreshes the queue's statistics every ten seconds while claims take deliveries, and not while they take none", () => {
    const policy = new PlannerStatisticsPolicy();
    // Past the growth marks.
    expect(scopeOf(policy, 1, 100_000, 0)).toBe('queue');
    expect(scopeOf(policy, 1, 10, INTERVAL_MS - 1)).toBeNull();
    expect(scopeOf(policy, 1, 10, INTERVAL_MS)).toBe('queue');
    // Nothing claimed for a minute: nothing to refresh.
    expect(scopeOf(policy, 1, 0, INTERVAL_MS * 7)).toBeNull();
    expect(scopeOf(policy, 1, 1, INTERVAL_MS * 7 + 1)).toBe('queue');
  });

  it('refreshes after a slow claim, never more often than every ten seconds, all three tables when theirs are over five minutes old', () => {
    const policy = new PlannerStatisticsPolicy();
    expect(scopeOf(policy, SLOW_CLAIM_MS - 1, 1, 0)).toBeNull();
    expect(scopeOf(policy, SLOW_CLAIM_MS, 0, 1)).toBe('all');
    expect(scopeOf(policy, 500, 0, 1 + INTERVAL_MS - 1)).toBeNull();
    expect(scopeOf(policy, 500, 0, 1 + INTERVAL_MS)).toBe('queue');
    expect(scopeOf(policy, 500, 0, 1 + ALL_TABLES_INTERVAL_MS - 1)).toBe('queue');
    expect(scopeOf(policy, 500, 0, 1 + ALL_TABLES_INTERVAL_MS)).toBeNull();
    expect(scopeOf(policy, 500, 0, 1 + ALL_TABLES_INTERVAL_MS + INTERVAL_MS)).toBe('all');
  });

  it('refreshes all three tables every five minutes while claims take deliveries, counted from the first claim', () => {
    const policy = new PlannerStatisticsPolicy();
    const scopes: [number, string][] = [];
    // Past the growth marks at once; then 10 a claim, one a second, for twelve minutes.
    scopeOf(policy, 1, 100_000, 0);
    for (let second = 1; second <= 720; second++) {
      const scope = scopeOf(policy, 1, 10, second * 1000);
      if (scope === 'all') scopes.push([second, scope]);
    }
    expect(scopes).toEqual([
      [300, 'all'],
      [600, 'all'],
    ]);
  });

  it('refreshes all three when a slow claim passes a growth mark, and the queue alone at the next mark within ten seconds', () => {
    const policy = new PlannerStatisticsPolicy();
    expect(scopeOf(policy, SLOW_CLAIM_MS, 1_000, 0)).toBe('all');
    expect(scopeOf(policy, SLOW_CLAIM_MS, 1_000, 1)).toBe('queue');
  });

  it('refreshes at a growth mark whenever it passes, and counts marks passed together once', () => {
    const policy = new PlannerStatisticsPolicy();
    expect(scopeOf(policy, 1, 1_000, 0)).toBe('queue');
    expect(scopeOf(policy, 1, 999, 1)).toBeNull();
    // 2,000 and 4,000 at once: one refresh, at once.
    expect(scopeOf(policy, 1, 3_001, 2)).toBe('queue');
    expect(scopeOf(policy, 1, 2_999, 3)).toBeNull();
    expect(scopeOf(policy, 1, 1, 4)).toBe('queue');
  });

  it('lets a periodic refresh pass over a table analyzed lately, and a growth mark or a slow claim have their own', () => {
    const policy = new PlannerStatisticsPolicy();
    expect(policy.observeClaim(1, 1_000, 0)).toEqual({ scope: 'queue', unlessWithinMs: 0 });
    expect(policy.observeClaim(1, 1, INTERVAL_MS)).toEqual({ scope: 'queue', unlessWithinMs: INTERVAL_MS / 2 });
    expect(policy.observeClaim(SLOW_CLAIM_MS, 1, INTERVAL_MS + 1)).toEqual({ scope: 'all', unlessWithinMs: 0 });
    expect(policy.observeClaim(1, 1, INTERVAL_MS + 1 + ALL_TABLES_INTERVAL_MS)).toEqual({
      scope: 'all',
      unlessWithinMs: ALL_TABLES_INTERVAL_MS / 2,
    });
  });
});
