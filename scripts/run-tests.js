#!/usr/bin/env node
// `pnpm test`: builds everything, lints, then type-checks and runs every package's tests through turbo
// with --continue, so one failing package never hides another's results, and prints one closing
// line with the totals of all jest runs ("N passed, N failed"). A package whose tests did not run
// or crashed (no .jest-results.json, or jest reporting failure without a failed test) counts as a
// failure and is named; so is a failed build or type-check. Exits non-zero on any failure.
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const path = require('node:path');
const { turbo } = require('./turbo');
const { root, workspacePackages } = require('./workspace');

/** Turbo's run summary (written by --summarize): every task with its exit code. */
function runSummary(before) {
  const runs = path.join(root, '.turbo', 'runs');
  if (!existsSync(runs)) return null;
  const file = readdirSync(runs).find((name) => name.endsWith('.json') && !before.has(name));
  if (!file) return null;
  try {
    return JSON.parse(readFileSync(path.join(runs, file), 'utf8'));
  } catch {
    return null;
  } finally {
    rmSync(path.join(runs, file), { force: true });
  }
}

function summaryFiles() {
  const runs = path.join(root, '.turbo', 'runs');
  return new Set(existsSync(runs) ? readdirSync(runs) : []);
}

/** Tasks of a turbo run that ran and failed, as "package#task" → exit code. */
function failedTasks(summary) {
  return new Map(
    (summary?.tasks ?? [])
      .filter((task) => task.execution && task.execution.exitCode !== 0)
      .map((task) => [task.taskId, task.execution.exitCode]),
  );
}

/** "file › test name" of each failed test, and "file (did not run)" of each suite that failed to run. */
function failedTestTitles(results) {
  const titles = [];
  for (const suite of results.testResults ?? []) {
    const file = path.relative(root, suite.name ?? suite.testFilePath ?? '');
    const failedTests = (suite.assertionResults ?? []).filter((test) => test.status === 'failed');
    for (const test of failedTests) titles.push(`${file} › ${test.fullName ?? test.title}`);
    if (failedTests.length === 0 && suite.status === 'failed') titles.push(`${file} (did not run)`);
  }
  return titles;
}

const packages = workspacePackages();
const tested = packages.filter(({ manifest }) => manifest.scripts?.test);
const resultsFile = ({ dir }) => path.join(dir, '.jest-results.json');
for (const pkg of packages) rmSync(resultsFile(pkg), { force: true });

// The build first, quietly (errors only). --continue: a package that fails to build does not
// stop the others, and the test run below still tries (and counts) every package's tests.
const beforeBuild = summaryFiles();
const build = turbo(['run', 'build', '--continue', '--output-logs=errors-only', '--summarize']);
const buildFailures = [...failedTasks(runSummary(beforeBuild)).keys()];
if (build.status !== 0 && buildFailures.length === 0) buildFailures.push(`turbo run build (exit ${build.status ?? build.signal})`);

// Lint and format: the boundaries ARCHITECTURE.md promises (eslint.config.mjs) and one style.
const lintFailures = [];
for (const [name, bin, args] of [
  ['eslint', 'eslint/bin/eslint.js', ['.']],
  ['prettier', 'prettier/bin/prettier.cjs', ['--check', '.', '--log-level', 'warn']],
]) {
  const lint = spawnSync(process.execPath, [path.join(root, 'node_modules', bin), ...args], { cwd: root, stdio: 'inherit' });
  if (lint.status !== 0) lintFailures.push(`lint (${name})`);
}

// One package's tests at a time: each jest run uses both cores itself (maxWorkers 2).
const beforeTests = summaryFiles();
const run = turbo(['run', 'typecheck', 'test', '--continue', '--concurrency=1', '--summarize']);
const taskFailures = failedTasks(runSummary(beforeTests));

let passed = 0;
let failed = 0;
let skipped = 0;
const notes = [];
const failPackage = (name, why) => {
  notes.push(`${name} (${why})`);
  failed += 1;
};
for (const pkg of tested) {
  const name = pkg.manifest.name;
  if (!existsSync(resultsFile(pkg))) {
    failPackage(name, 'no test results: its tests did not run or crashed');
    continue;
  }
  let results;
  try {
    results = JSON.parse(readFileSync(resultsFile(pkg), 'utf8'));
  } catch (error) {
    failPackage(name, `unreadable test results: ${error.message}`);
    continue;
  }
  const failures = (results.numFailedTests ?? 0) + (results.numRuntimeErrorTestSuites ?? 0);
  passed += results.numPassedTests ?? 0;
  skipped += (results.numPendingTests ?? 0) + (results.numTodoTests ?? 0);
  failed += failures;
  const exitCode = taskFailures.get(`${name}#test`);
  if (failures > 0) {
    // Named on the closing line, which is all a long run's reader (CI's summary) may get to see.
    for (const title of failedTestTitles(results)) notes.push(`${name}: ${title}`);
    continue;
  }
  // jest failed the run without a failing test (a global setup or teardown error, a suite that
  // could not load…), or exited non-zero after reporting success: not a pass either way.
  if (results.success === false) {
    const suites = failedTestTitles(results);
    failPackage(name, `jest reported failure without a failed test${suites.length ? `: ${suites.join(', ')}` : ''}`);
  } else if (exitCode !== undefined) failPackage(name, `its test task exited with code ${exitCode} after reporting success`);
}

// Failures the test counts do not show: builds and type-checks.
const testTasks = new Set(tested.map(({ manifest }) => `${manifest.name}#test`));
const otherFailures = [...new Set([...buildFailures, ...lintFailures, ...[...taskFailures.keys()].filter((task) => !testTasks.has(task))])];
if (otherFailures.length) notes.push(`failed: ${otherFailures.join(', ')}`);
if (run.status !== 0 && failed === 0 && otherFailures.length === 0) notes.push(`turbo exited with ${run.status ?? run.signal}`);

console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}${notes.length ? ` — ${notes.join('; ')}` : ''}`);

const ok = failed === 0 && build.status === 0 && run.status === 0 && otherFailures.length === 0;
process.exit(ok ? 0 : 1);
