#!/usr/bin/env node
// `pnpm start`, `pnpm herald …`, `pnpm migrate`: builds the cli and everything it runs (api,
// worker, packages) quietly — turbo's output appears only when the build fails — then runs
// `herald` with the given arguments, so the terminal shows Herald's own output and nothing else.
const { spawn } = require('node:child_process');
const { existsSync } = require('node:fs');
const path = require('node:path');
const { startTurbo } = require('./turbo');

const root = path.resolve(__dirname, '..');
const CLI = path.join(root, 'apps/cli/dist/main.js');
/** A build that is still going after this long is doing real work: say so. */
const SLOW_BUILD_NOTICE_MS = 2_000;

const say = (line) => process.stderr.write(`herald: ${line}\n`);

/** Builds @herald/cli and its dependencies, and the console the api serves at /console; resolves with turbo's exit code. */
function build() {
  // No cli yet means nothing was built yet: a fresh clone compiles every package (and generates
  // the Prisma client). Later runs are cache hits, or rebuild only what changed.
  const firstBuild = !existsSync(CLI);
  let notice = null;
  if (firstBuild) say('building (the first run takes up to a minute)…');
  else notice = setTimeout(() => say('building what changed since the last run…'), SLOW_BUILD_NOTICE_MS);

  const child = startTurbo(['run', 'build', '--filter=@herald/cli', '--filter=@herald/console', '--output-logs=errors-only'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  child.stdout.on('data', (chunk) => output.push(chunk));
  child.stderr.on('data', (chunk) => output.push(chunk));
  return new Promise((resolve) => {
    child.on('error', (error) => {
      output.push(Buffer.from(`${error.message}\n`));
      resolve(1);
    });
    child.on('close', (code, signal) => {
      clearTimeout(notice);
      if (code !== 0) {
        process.stderr.write(Buffer.concat(output));
        say(`the build failed${signal ? ` (${signal})` : ''}; its output is above.`);
      }
      resolve(code ?? 1);
    });
  });
}

/** Runs the cli with stdio passed through; exits as it exits. */
function runCli(args) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: root, stdio: 'inherit' });
  // Ctrl-C reaches the whole foreground process group, the cli included, which stops api and
  // worker itself: passing SIGINT on as well would be a second Ctrl-C (stop at once). A signal
  // sent to this process alone (SIGTERM from a supervisor, SIGHUP) is passed on.
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    process.exit(code ?? 1);
  });
}

build().then((code) => (code === 0 ? runCli(process.argv.slice(2)) : process.exit(code)));
