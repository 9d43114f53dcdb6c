import { PgPool } from '../pg-pool';

/**
 * ANALYZEs `tables`, but those analyzed (by anyone: another process, autovacuum) within
 * `unlessWithinMs` (0: every one). PostgreSQL keeps a prepared statement's plan, a foreign key's
 * check among them, until an ANALYZE of a table it reads: a plan made while a table was tiny
 * scans it however it grows. Returns the tables analyzed and PostgreSQL's notices: a role that
 * does not own a table is told so in a warning, and nothing is analyzed. `tables` are the
 * callers' constants, never what a request wrote.
 */
export async function analyzeUnlessRecent<T extends string>(
  pg: PgPool,
  tables: readonly T[],
  unlessWithinMs: number,
): Promise<{ analyzed: T[]; notices: string[] }> {
  const stale =
    unlessWithinMs > 0
      ? (
          await pg.sql<{ relname: T }>(
            `SELECT t.relname FROM unnest($1::text[]) WITH ORDINALITY AS t(relname, n)
               LEFT JOIN pg_stat_user_tables s ON s.relid = to_regclass(t.relname)
              WHERE GREATEST(s.last_analyze, s.last_autoanalyze) IS NULL
                 OR GREATEST(s.last_analyze, s.last_autoanalyze) < now() - $2::int * interval '1 millisecond'
              ORDER BY t.n`,
            [tables, unlessWithinMs],
          )
        ).map((row) => row.relname)
      : [...tables];
  if (stale.length === 0) return { analyzed: [], notices: [] };
  const { notices } = await pg.sqlWithNotices(`ANALYZE ${stale.join(', ')}`);
  return { analyzed: stale, notices };
}

/**
 * When a process that adds rows to a table should refresh its statistics: as it has added 1,000,
 * 2,000, 4,000… up to 64,000 since it started (a fresh database filling; past that, autovacuum's
 * own ANALYZE has long come where it runs at all). `added` returns whether a mark was passed.
 */
export class GrowthMarks {
  static readonly FIRST = 1_000;
  static readonly LAST = 64_000;
  private count = 0;
  private next = GrowthMarks.FIRST;

  added(rows: number): boolean {
    this.count += rows;
    if (this.next > GrowthMarks.LAST || this.count < this.next) return false;
    // Marks passed at once (a large batch) count once.
    while (this.next <= this.count) this.next *= 2;
    return true;
  }
}
