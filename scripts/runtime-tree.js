#!/usr/bin/env node
// node scripts/runtime-tree.js <destination> <package name>
//
// Writes what one app needs at run time, after `pnpm install` and a build, into <destination>
// (the Dockerfile copies it into an image): the workspace's own layout, with every package's
// package.json, the dist/ of the app and of the workspace packages it depends on, prisma/
// (packages/database reads its migrations from <root>/prisma at run time; the Prisma client is
// compiled into packages/database/dist/generated), and production dependencies only, installed
// offline from the store the build's install filled, exactly as pnpm-lock.yaml pins them.
//
// Why not `pnpm deploy`: it copies workspace packages into node_modules/.pnpm, where
// packages/database no longer finds <root>/prisma. Dependencies are hoisted to the root's
// node_modules so that the workspace packages resolve their peer dependencies (@nestjs/common,
// class-validator…) the same way a deployed, injected package would.
const { spawnSync } = require('node:child_process');
const { cpSync, existsSync, mkdirSync, readFileSync, rmSync } = require('node:fs');
const path = require('node:path');
const { root, workspacePackages } = require('./workspace');

const [destinationArg, app] = process.argv.slice(2);
if (!destinationArg || !app) {
  console.error('usage: node scripts/runtime-tree.js <destination> <package name>, e.g. /out/api @herald/cli');
  process.exit(2);
}
const destination = path.resolve(destinationArg);
const packages = workspacePackages();
const byName = new Map(packages.map((pkg) => [pkg.manifest.name, pkg]));
if (!byName.has(app)) {
  console.error(`runtime-tree: no workspace package named ${app}`);
  process.exit(2);
}

/** The app and the workspace packages it needs at run time (dependencies, not devDependencies). */
function runtimeClosure(name, found = new Set()) {
  if (found.has(name)) return found;
  found.add(name);
  for (const [dependency, spec] of Object.entries(byName.get(name).manifest.dependencies ?? {})) {
    if (spec.startsWith('workspace:')) runtimeClosure(dependency, found);
  }
  return found;
}
const closure = runtimeClosure(app);

rmSync(destination, { recursive: true, force: true });
mkdirSync(destination, { recursive: true });
for (const file of ['package.json', 'pnpm-workspace.yaml', 'pnpm-lock.yaml', '.npmrc']) {
  if (existsSync(path.join(root, file))) cpSync(path.join(root, file), path.join(destination, file));
}
cpSync(path.join(root, 'prisma'), path.join(destination, 'prisma'), { recursive: true });
for (const pkg of packages) {
  // Every package's manifest, so that the frozen lockfile matches the workspace it was made for.
  mkdirSync(path.join(destination, pkg.relative), { recursive: true });
  cpSync(path.join(pkg.dir, 'package.json'), path.join(destination, pkg.relative, 'package.json'));
  if (!closure.has(pkg.manifest.name)) continue;
  if (!existsSync(path.join(pkg.dir, 'dist'))) {
    console.error(`runtime-tree: ${pkg.relative}/dist is missing: build first (turbo run build --filter=${app})`);
    process.exit(1);
  }
  cpSync(path.join(pkg.dir, 'dist'), path.join(destination, pkg.relative, 'dist'), { recursive: true });
}

const pnpm = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).packageManager;
const install = spawnSync(
  'npx',
  ['-y', pnpm, 'install', '--prod', '--frozen-lockfile', '--offline', '--shamefully-hoist', `--filter=${app}...`],
  { cwd: destination, stdio: 'inherit' },
);
if (install.status !== 0) {
  console.error(`runtime-tree: installing ${app}'s production dependencies failed`);
  process.exit(install.status ?? 1);
}
console.log(`runtime-tree: ${app} with ${[...closure].filter((name) => name !== app).join(', ')} in ${destination}`);
