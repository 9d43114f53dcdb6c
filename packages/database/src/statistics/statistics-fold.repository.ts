import { Injectable } from '@nestjs/common';
import { PgPool } from '../pg-pool';
import { FOLD_PENDING_STATISTICS_SQL } from './delivery-statistics.sql';

/** Pending rows (finish batches) folded per statement: a short transaction however far behind the folds are. */
export const STATISTICS_FOLD_BATCH_SIZE = 500;

/** What one fold did; `held` false when another process was folding (and this one did nothing). */
export interface StatisticsFold {
  held: boolean;
  pendingRows: number;
  attempts: number;
  keys: number;
}

/**
 * The worker's side of delivery statistics (PRODUCT.md §16) besides the finish statement: folding
 * what the finishes left pending into the hourly rows (statistics/delivery-statistics.sql.ts).
 * Loads no Prisma (the worker imports it from `@herald/database/queue`).
 */
@Injectable()
export class StatisticsFoldRepository {
  constructor(private readonly pg: PgPool) {}

  /** Folds up to `limit` pending rows, oldest first, in one statement. */
  async foldPending(limit = STATISTICS_FOLD_BATCH_SIZE): Promise<StatisticsFold> {
    const [row] = await this.pg.sql<{ held: boolean; pending_rows: number; attempts: number; keys: number }>(FOLD_PENDING_STATISTICS_SQL, [
      limit,
    ]);
    return { held: row.held, pendingRows: row.pending_rows, attempts: row.attempts, keys: row.keys };
  }

  /** Folds until nothing is pending (or another process is folding); the attempts folded. */
  async foldAll(limit = STATISTICS_FOLD_BATCH_SIZE): Promise<number> {
    let attempts = 0;
    for (;;) {
      const fold = await this.foldPending(limit);
      attempts += fold.attempts;
      if (!fold.held || fold.pendingRows < limit) return attempts;
    }
  }
}
