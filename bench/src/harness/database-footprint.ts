import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { BenchEnvironment } from './environment';

/**
 * What PostgreSQL wrote and spent for one benchmark database between two snapshots (the storage
 * benchmark, issue 20): its own WAL read back with pg_walinspect (the server is shared, so
 * pg_stat_wal would count every other database's writes too), its commits, its tuples per
 * table, and the CPU of its backends from /proc.
 *
 * Table statistics reach pg_stat_user_tables when a backend reports them, which an idle
 * backend may put off for seconds; so a snapshot is taken while no api or worker process is
 * connected (their backends report as they exit), and the CPU of the backends is read by the
 * caller while they still run (`backendCpuMs`).
 */
export interface FootprintSnapshot {
  lsn: string;
  commits: number;
  tables: Map<string, TableCounts>;
}

export interface TableCounts {
  inserted: number;
  updated: number;
  hotUpdated: number;
  deleted: number;
}

export interface WalUse {
  records: number;
  /** Record bytes without full-page images: what the statements themselves wrote. */
  bytes: number;
  /** Full-page images: the first change to a page after a checkpoint (anyone's: DROP DATABASE forces one). */
  fullPageBytes: number;
  /** Bytes (full-page images included) per relation, largest first. */
  byRelation: { relation: string; bytes: number }[];
}

export interface Footprint {
  wal: WalUse;
  commits: number;
  tables: Map<string, TableCounts>;
}

const TABLE_COUNTS = `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables`;

export class DatabaseFootprint {
  private databaseOid = '';
  /** Holds a temporary replication slot, so the server keeps the WAL to read back until close(). */
  private slotHolder: pg.Client | null = null;

  constructor(private readonly environment: BenchEnvironment) {}

  /** pg_walinspect lives in the benchmark's own database, so nothing outside it is changed. */
  async prepare(): Promise<void> {
    await this.environment.sql('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const [row] = await this.environment.sql<{ oid: string }>('SELECT oid::text FROM pg_database WHERE datname = current_database()');
    this.databaseOid = row.oid;
    // A checkpoint (anyone's: every DROP DATABASE forces one) recycles WAL segments; a temporary
    // slot keeps them, and goes away with its session whatever happens to the benchmark.
    this.slotHolder = new pg.Client({ connectionString: this.environment.databaseUrl });
    await this.slotHolder.connect();
    await this.slotHolder.query('SELECT pg_create_physical_replication_slot($1, true, true)', [
      `herald_bench_${randomBytes(4).toString('hex')}`,
    ]);
  }

  async close(): Promise<void> {
    await this.slotHolder?.end();
    this.slotHolder = null;
  }

  /** `checkpoint`: start from a checkpoint, so that what follows pays its full-page images the same way each time. */
  async snapshot(checkpoint: boolean): Promise<FootprintSnapshot> {
    if (checkpoint) await this.environment.sql('CHECKPOINT');
    const [lsn] = await this.environment.sql<{ lsn: string }>('SELECT pg_current_wal_flush_lsn()::text AS lsn');
    const [commits] = await this.environment.sql<{ commits: string }>(
      'SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = current_database()',
    );
    const tables = new Map(
      (await this.environment.sql<Record<string, string>>(TABLE_COUNTS)).map((row) => [
        row.relname,
        {
          inserted: Number(row.n_tup_ins),
          updated: Number(row.n_tup_upd),
          hotUpdated: Number(row.n_tup_hot_upd),
          deleted: Number(row.n_tup_del),
        },
      ]),
    );
    return { lsn: lsn.lsn, commits: Number(commits.commits), tables };
  }

  /** What happened between two snapshots. */
  async between(before: FootprintSnapshot, after: FootprintSnapshot): Promise<Footprint> {
    return { wal: await this.walBetween(before.lsn, after.lsn), ...this.countsBetween(before, after) };
  }

  /** Commits and tuple counts between two snapshots, without the WAL (which needs prepare()). */
  countsBetween(before: FootprintSnapshot, after: FootprintSnapshot): Omit<Footprint, 'wal'> {
    const tables = new Map<string, TableCounts>();
    for (const [name, counts] of after.tables) {
      const earlier = before.tables.get(name) ?? { inserted: 0, updated: 0, hotUpdated: 0, deleted: 0 };
      tables.set(name, {
        inserted: counts.inserted - earlier.inserted,
        updated: counts.updated - earlier.updated,
        hotUpdated: counts.hotUpdated - earlier.hotUpdated,
        deleted: counts.deleted - earlier.deleted,
      });
    }
    return { commits: after.commits - before.commits, tables };
  }

  /**
   * This database's WAL records between two positions: those that touch one of its blocks, and
   * the commit records of the transactions that wrote them. A relation is named through its
   * file node (pg_filenode_relation), or by the node when it has gone (a dropped relation).
   */
  private async walBetween(start: string, end: string): Promise<WalUse> {
    const rows = await this.environment.sql<{ relation: string | null; records: string; bytes: string; fpi: string }>(
      `WITH wal AS (
         SELECT xid, resource_manager, record_length, fpi_length,
                substring(block_ref FROM ' rel \\d+/' || $3 || '/(\\d+)') AS filenode
           FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
       ), ours AS (
         SELECT * FROM wal WHERE filenode IS NOT NULL
         UNION ALL
         SELECT * FROM wal
          WHERE resource_manager = 'Transaction' AND xid IN (SELECT xid FROM wal WHERE filenode IS NOT NULL AND xid <> '0')
       )
       SELECT COALESCE(pg_filenode_relation(0, filenode::oid)::text, 'filenode ' || filenode, 'commit records') AS relation,
              count(*)::text AS records, sum(record_length - fpi_length)::text AS bytes, sum(fpi_length)::text AS fpi
         FROM ours GROUP BY 1`,
      [start, end, this.databaseOid],
    );
    const byRelation = rows
      .map((row) => ({ relation: row.relation ?? '?', bytes: Number(row.bytes) + Number(row.fpi) }))
      .sort((a, b) => b.bytes - a.bytes);
    return {
      records: rows.reduce((sum, row) => sum + Number(row.records), 0),
      bytes: rows.reduce((sum, row) => sum + Number(row.bytes), 0),
      fullPageBytes: rows.reduce((sum, row) => sum + Number(row.fpi), 0),
      byRelation,
    };
  }

  /** CPU used so far by the PostgreSQL server this database is on (serverCpuMs), in ms. */
  async serverCpuMs(): Promise<number> {
    // The checkpointer lives as long as the server: a child of the postmaster to find it by (a
    // backend of environment.sql has exited by the time its answer is read).
    const [row] = await this.environment.sql<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE backend_type = 'checkpointer'`);
    return serverCpuMs(row.pid);
  }

  /** CPU used so far by every backend connected to this database but the caller's own, in ms. */
  async backendCpuMs(): Promise<number> {
    const rows = await this.environment.sql<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    return rows.reduce((sum, row) => sum + processCpuMs(row.pid), 0);
  }
}

/** User + system CPU of a process so far, in ms (0 when it has gone). */
export function processCpuMs(pid: number): number {
  const fields = statFields(pid);
  return fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 : 0;
}

/**
 * CPU used so far by the whole PostgreSQL server whose child process `childPid` is, in ms: the
 * postmaster's own, its exited children's (counted to it as it reaps them), and every live
 * child's. Unlike summing one database's live backends, a connection that closes between two
 * readings (a pool's idle timeout) takes none of its CPU away with it.
 */
export function serverCpuMs(childPid: number): number {
  const postmaster = Number(statFields(childPid)?.[1]);
  const own = statFields(postmaster);
  if (!own) return 0;
  // utime, stime, cutime, cstime (fields 14-17), in clock ticks of 10 ms.
  const reaped = ((Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])) * 1000) / 100;
  const children = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  return reaped + children.reduce((sum, pid) => sum + processCpuMs(Number(pid)), 0);
}

/** A process's /proc stat fields after its command name (which may hold spaces), from field 3 on; null when it has gone. */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}
