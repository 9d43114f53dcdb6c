import { DatabaseConnection } from './sql';

/** A node of EXPLAIN (ANALYZE, FORMAT JSON)'s plan, as far as the plan tests read it. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/**
 * The plan PostgreSQL ran for `statement`, with its actual row counts: run in a transaction that
 * is rolled back, so a statement that writes leaves nothing behind.
 */
export async function explainAnalyze(session: DatabaseConnection, statement: string, params: unknown[] = []): Promise<PlanNode> {
  await session.query('BEGIN');
  try {
    const [row] = await session.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`, params);
    return row['QUERY PLAN'][0].Plan;
  } finally {
    await session.query('ROLLBACK');
  }
}

/**
 * The rows each node of `plan` that reads `table` read, over all its loops: a plan that reads a
 * table whole once per row of another shows here as one node with rows × loops.
 */
export function rowsRead(plan: PlanNode, table: string, found: number[] = []): number[] {
  if (plan['Relation Name'] === table && plan['Node Type'] !== 'ModifyTable')
    found.push((plan['Actual Rows'] ?? 0) * (plan['Actual Loops'] ?? 1));
  for (const child of plan.Plans ?? []) rowsRead(child, table, found);
  return found;
}

/** How many times each node of `plan` for which `reads` holds ran: a node run once per row of another shows its loops. */
export function loopsOf(plan: PlanNode, reads: (node: PlanNode) => boolean, found: number[] = []): number[] {
  if (reads(plan)) found.push(plan['Actual Loops'] ?? 1);
  for (const child of plan.Plans ?? []) loopsOf(child, reads, found);
  return found;
}
