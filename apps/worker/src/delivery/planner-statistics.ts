import { GrowthMarks } from '@herald/database/queue';

/**
 * When the worker refreshes the planner's statistics of the tables its statements read
 * (DeliveryQueueRepository.refreshPlannerStatistics).
 *
 * PostgreSQL keeps a prepared statement's generic plan until something invalidates it (an
 * ANALYZE of a table it reads). Made while a table was small, that plan reads it with sequential
 * scans, and keeps doing so as it grows: measured, a fresh database's claims went from 1–2 ms to
 * 8–22 ms a claim within 10,000 deliveries, a queue planned empty and then flooded with 16,000
 * took 600–700 ms a claim, and a finish planned on empty tables read 50,000 rows to finish 3.
 * Statistics taken while a table held few live rows among many dead ones (a queue between
 * bursts, a history retention has just thinned) make even a fresh plan read it whole. Autovacuum's
 * ANALYZE comes a minute or more later, if it runs at all. So, while its claims take deliveries,
 * the worker refreshes:
 * - the queue's (the table whose rows come and go) every ten seconds, and at 1,000 claimed, 2,000,
 *   4,000… up to 64,000 as a fresh database fills: no cached plan of the claim or the finish
 *   outlives the queue's growth by more;
 * - all three tables' every five minutes (an ANALYZE of `deliveries` and `events` costs
 *   PostgreSQL about 150 ms: at each growth mark it was 46 µs per delivered event in the storage
 *   bench), and after a slow claim, which a plan made for a far smaller table makes it, when
 *   those are over five minutes old (the queue's otherwise, never more often than every ten
 *   seconds: on a busy server slow claims come every few seconds).
 * An ANALYZE invalidates the plans that read the table at once, in every session.
 */
/** The queue's table alone, or the three tables the claim reads. */
export type PlannerStatisticsScope = 'queue' | 'all';

/**
 * A refresh to make: of which tables, and unless one was analyzed (by anyone: another worker,
 * autovacuum) within how long. The periodic refreshes accept a recent one, so N workers do not
 * analyze a table N times as often; a growth mark or a slow claim wants its own.
 */
export interface PlannerStatisticsRefresh {
  scope: PlannerStatisticsScope;
  unlessWithinMs: number;
}

export class PlannerStatisticsPolicy {
  static readonly SLOW_CLAIM_MS = 20;
  static readonly INTERVAL_MS = 10_000;
  static readonly ALL_TABLES_INTERVAL_MS = 300_000;
  /** 1,000, 2,000, 4,000… up to 64,000 claimed: the api's rule for what it publishes, too. */
  private readonly growth = new GrowthMarks();
  /** When this worker saw its first claim: the five-minute refresh counts from there. */
  private startedAt: number | null = null;
  private refreshedAt: number | null = null;
  private allRefreshedAt: number | null = null;
  private slowRefreshedAt = -Infinity;
  private claimedSinceRefresh = 0;
  private claimedSinceAll = 0;

  /** Records a claim (its duration and how many deliveries it took); the refresh to make now, or null. */
  observeClaim(claimMs: number, claimedRows: number, nowMs: number): PlannerStatisticsRefresh | null {
    const { INTERVAL_MS, ALL_TABLES_INTERVAL_MS, SLOW_CLAIM_MS } = PlannerStatisticsPolicy;
    this.claimedSinceRefresh += claimedRows;
    this.claimedSinceAll += claimedRows;
    this.startedAt ??= nowMs;
    const slow = claimMs >= SLOW_CLAIM_MS && nowMs - this.slowRefreshedAt >= INTERVAL_MS;
    // Marks passed at once (a large claim) count once.
    const grown = this.growth.added(claimedRows);
    const queueDue = this.claimedSinceRefresh > 0 && nowMs - (this.refreshedAt ?? this.startedAt) >= INTERVAL_MS;
    const allDue = this.claimedSinceAll > 0 && nowMs - (this.allRefreshedAt ?? this.startedAt) >= ALL_TABLES_INTERVAL_MS;
    const allStale = this.allRefreshedAt === null || nowMs - this.allRefreshedAt >= ALL_TABLES_INTERVAL_MS;
    if (!slow && !grown && !queueDue && !allDue) return null;
    const all = allDue || (slow && allStale);
    if (slow) this.slowRefreshedAt = nowMs;
    if (all) {
      this.allRefreshedAt = nowMs;
      this.claimedSinceAll = 0;
    }
    this.refreshedAt = nowMs;
    this.claimedSinceRefresh = 0;
    const periodicOnly = !slow && !grown;
    if (all) return { scope: 'all', unlessWithinMs: periodicOnly ? ALL_TABLES_INTERVAL_MS / 2 : 0 };
    return { scope: 'queue', unlessWithinMs: periodicOnly ? INTERVAL_MS / 2 : 0 };
  }
}
