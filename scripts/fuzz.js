// `pnpm fuzz [runs]`: the api's fuzz suite (apps/api/test/fuzz.e2e-spec.ts) run long, with a
// random seed unless HERALD_FUZZ_SEED is set. The seed is printed first, and fast-check prints
// it again with the counterexample, so any failure can be replayed exactly.
const { spawnSync } = require('node:child_process');
const { randomInt } = require('node:crypto');
const path = require('node:path');

const runs = process.argv[2] ?? process.env.HERALD_FUZZ_RUNS ?? '20000';
if (!/^[1-9]\d*$/.test(runs)) {
  console.error(`fuzz: the number of runs must be a positive integer, got "${runs}"`);
  process.exit(2);
}
const seed = process.env.HERALD_FUZZ_SEED ?? String(randomInt(2 ** 31 - 1));
console.log(`fuzz: ${runs} requests, seed ${seed} (replay with HERALD_FUZZ_SEED=${seed} pnpm fuzz ${runs})`);
const run = spawnSync('npx', ['jest', '--runInBand', 'test/fuzz.e2e-spec.ts'], {
  cwd: path.join(__dirname, '..', 'apps', 'api'),
  stdio: 'inherit',
  env: { ...process.env, HERALD_FUZZ_RUNS: runs, HERALD_FUZZ_SEED: seed },
});
process.exit(run.status ?? 1);
