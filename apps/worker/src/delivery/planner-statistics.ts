/**
 * When the worker refreshes the planner's statistics of the tables its claim reads
 * (DeliveryQueueRepository.refreshPlannerStatistics).
 *
 * The claim is a prepared statement, and PostgreSQL keeps the generic plan it made after the
 * first few runs until something invalidates it (an ANALYZE). Made while a table was small, that
 * plan reads it with sequential scans, and keeps doing so as it grows: measured, a fresh
 * database's claims went from 1–2 ms to 8–22 ms a claim within 10,000 deliveries, and a queue
 * planned empty and then flooded with 16,000 took 600–700 ms a claim. Autovacuum's ANALYZE comes
 * a minute or more later. So the worker refreshes them itself:
 * - while its first deliveries grow the tables from nothing: after 1,000 claimed, then 2,000,
 *   4,000… up to 64,000 (past that, a plan made for the tables' size stays index-driven);
 * - whenever a claim was slow, which a plan made for a far smaller queue makes it;
 * the slow claims' refreshes never more often than every ten seconds. Each refresh is an
 * ANALYZE of three tables (PostgreSQL samples at most 30,000 rows of each), which invalidates the
 * cached plans at once.
 */
export class PlannerStatisticsPolicy {
  static readonly SLOW_CLAIM_MS = 20;
  static readonly INTERVAL_MS = 10_000;
  static readonly FIRST_GROWTH_MARK = 1_000;
  static readonly LAST_GROWTH_MARK = 64_000;

  private claimed = 0;
  private nextGrowthMark = PlannerStatisticsPolicy.FIRST_GROWTH_MARK;
  private refreshedAt = -Infinity;

  /** Records a claim (its duration and how many deliveries it took); true when a refresh is due now. */
  observeClaim(claimMs: number, claimedRows: number, nowMs: number): boolean {
    this.claimed += claimedRows;
    const grown = this.nextGrowthMark <= PlannerStatisticsPolicy.LAST_GROWTH_MARK && this.claimed >= this.nextGrowthMark;
    const slow = claimMs >= PlannerStatisticsPolicy.SLOW_CLAIM_MS;
    // Growth refreshes are seven in a worker's life, each worth making at once; slow claims may
    // come in a run (a busy server), and one refresh answers them all.
    if (!grown && !(slow && nowMs - this.refreshedAt >= PlannerStatisticsPolicy.INTERVAL_MS)) return false;
    this.refreshedAt = nowMs;
    // Marks passed at once (a large claim, or a slow claim's refresh before them) count once.
    while (this.nextGrowthMark <= this.claimed) this.nextGrowthMark *= 2;
    return true;
  }
}
