// Runs every package's tests through turbo, then prints one closing line with the totals of
// all jest runs ("N passed, N failed"), so a reader (or CI) sees the whole result at a glance.
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const resultFiles = () => [
  ...['apps', 'packages'].flatMap((group) =>
    readdirSync(path.join(root, group)).map((name) => path.join(root, group, name, '.jest-results.json')),
  ),
  path.join(root, 'bench', '.jest-results.json'),
];

for (const file of resultFiles()) rmSync(file, { force: true });
const turbo = spawnSync('turbo', ['run', 'typecheck', 'test', '--concurrency=1'], { stdio: 'inherit', cwd: root, shell: false });

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of resultFiles().filter(existsSync)) {
  const results = JSON.parse(readFileSync(file, 'utf8'));
  passed += results.numPassedTests;
  failed += results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0);
  skipped += results.numPendingTests + results.numTodoTests;
}
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(turbo.status ?? 1);
