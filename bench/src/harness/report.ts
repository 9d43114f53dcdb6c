import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** bench/results, or HERALD_BENCH_RESULTS_DIR (the smoke test writes elsewhere). */
export const RESULTS_DIR = process.env.HERALD_BENCH_RESULTS_DIR ?? path.resolve(__dirname, '../../results');

/** One measured figure; `target` says what it must reach, `pass` whether it did (null: for the record). */
export interface Figure {
  metric: string;
  value: number;
  unit: string;
  baseline?: { name: string; value: number };
  ratio?: number;
  target?: string;
  pass?: boolean | null;
}

export interface BenchResult {
  name: string;
  description: string;
  figures: Figure[];
  notes?: string[];
  /** Query plans (EXPLAIN output, one line per entry) the figures rest on, printed after the table. */
  plans?: Record<string, string[]>;
}

/** Writes bench/results/<name>.json with the machine it ran on and returns the result. */
export function writeResult(result: BenchResult): BenchResult {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const machine = {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  };
  writeFileSync(
    path.join(RESULTS_DIR, `${result.name}.json`),
    JSON.stringify({ ...result, machine, at: new Date().toISOString() }, null, 2),
  );
  return result;
}

export function printTable(results: BenchResult[]): void {
  const rows = results.flatMap((result) =>
    result.figures.map((f) => [
      result.name,
      f.metric,
      `${f.value} ${f.unit}`,
      f.baseline ? `${f.baseline.value} (${f.baseline.name})` : '',
      f.ratio === undefined ? '' : `${Math.round(f.ratio * 100)}%`,
      f.target ?? '',
      f.pass === undefined || f.pass === null ? '' : f.pass ? 'yes' : 'NO',
    ]),
  );
  const header = ['benchmark', 'metric', 'value', 'baseline (same run)', 'ratio', 'target', 'met'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ');
  console.log(`\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of rows) console.log(line(row));
  for (const result of results) for (const note of result.notes ?? []) console.log(`  ${result.name}: ${note}`);
  for (const result of results) {
    for (const [name, lines] of Object.entries(result.plans ?? {}))
      console.log(`\n${result.name}, ${name}:\n${lines.map((line) => `  ${line}`).join('\n')}`);
  }
}
