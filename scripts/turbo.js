#!/usr/bin/env node
// Every turbo call the project's scripts make goes through here, so each one runs with telemetry
// off and without the update notifier (Herald's scripts send nothing anywhere). As a command:
// `node scripts/turbo.js run build` is `turbo run build`; as a module, `turbo(args, options)`.
// Run it through pnpm (`npx -y pnpm@12.21.0 <script>`): turbo looks for the package manager's
// binary on the PATH that pnpm gives its scripts.
const { spawn, spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const TURBO = require.resolve('turbo/bin/turbo', { paths: [root] });

/** The environment turbo runs with: the caller's, telemetry and update checks off. */
function turboEnv(env = process.env) {
  return { ...env, TURBO_TELEMETRY_DISABLED: '1', TURBO_NO_UPDATE_NOTIFIER: '1' };
}

/** Runs turbo to the end (spawnSync's options: stdio, env…) and returns spawnSync's result. */
function turbo(args, options = {}) {
  return spawnSync(process.execPath, [TURBO, ...args], { cwd: root, stdio: 'inherit', ...options, env: turboEnv(options.env) });
}

/** Starts turbo and returns the child process (for output to collect while something else runs). */
function startTurbo(args, options = {}) {
  return spawn(process.execPath, [TURBO, ...args], { cwd: root, ...options, env: turboEnv(options.env) });
}

module.exports = { turbo, startTurbo, turboEnv };

if (require.main === module) {
  const result = turbo(process.argv.slice(2));
  if (result.error) throw result.error;
  process.exit(result.status ?? 1);
}
