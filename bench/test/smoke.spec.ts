import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Runs the whole benchmark suite on tiny sizes, through its real entry point, so the harness
 * cannot rot. Its figures mean nothing and are not checked against targets; their shape is.
 */
describe('pnpm bench (smoke, --quick)', () => {
  it('runs every benchmark and writes a result with measured figures for each', async () => {
    const resultsDir = mkdtempSync(path.join(os.tmpdir(), 'herald-bench-smoke-'));
    try {
      const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(process.execPath, [path.resolve(__dirname, '../dist/main.js'), '--quick'], {
          env: { ...process.env, HERALD_BENCH_RESULTS_DIR: resultsDir },
        });
        let output = '';
        child.stdout.on('data', (chunk) => (output += chunk));
        child.stderr.on('data', (chunk) => (output += chunk));
        child.on('exit', (exitCode) => resolve({ code: exitCode, output }));
      });
      expect({ code, tail: output.slice(-2000) }).toMatchObject({ code: 0 });
      expect(output).toMatch(/benchmark\s+metric\s+value/);

      const files = readdirSync(resultsDir).sort();
      expect(files).toEqual(
        [
          'api-publish',
          'api-read',
          'api-write',
          'claim-scale',
          'delivery-latency',
          'delivery-throughput',
          'embedded',
          'event-schemas',
          'events-list',
          'history',
          'isolation',
          'keyed-publishes',
          'memory',
          'ordered-delivery',
          'peers',
          'recover',
          'retention',
          'retry-timing',
          'statistics',
          'storage',
          'subscription-filters',
          'throttle',
          'worker-scale',
        ]
          .map((name) => `${name}.json`)
          .sort(),
      );
      for (const file of files) {
        const result = JSON.parse(readFileSync(path.join(resultsDir, file), 'utf8'));
        expect(result.figures.length).toBeGreaterThan(0);
        expect(result.machine.cpus).toBeGreaterThan(0);
        for (const figure of result.figures) {
          expect(Number.isFinite(figure.value)).toBe(true);
          if (figure.baseline) expect(figure.baseline.value).toBeGreaterThanOrEqual(0);
          if (figure.ratio !== undefined) {
            expect(figure.baseline.value).toBeGreaterThan(0);
            // The ratio is of the measured rates; the figures shown are rounded (most to whole
            // numbers), which on quick runs' small figures moves their quotient by a percent or two.
            const shown = figure.value / figure.baseline.value;
            const rounding = shown * (0.5 / figure.baseline.value + 0.5 / Math.max(1, figure.value));
            expect({ file, metric: figure.metric, off: Math.abs(figure.ratio - shown) <= 0.05 + rounding }).toEqual({
              file,
              metric: figure.metric,
              off: true,
            });
          }
        }
      }
    } finally {
      rmSync(resultsDir, { recursive: true, force: true });
    }
  });
});
