// The workspace's packages, read the way pnpm does: the folders pnpm-workspace.yaml lists under
// `packages:` (plain paths and `dir/*` globs), each with its package.json.
const { existsSync, readdirSync, readFileSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');

/** `packages:` entries of pnpm-workspace.yaml (the only list this repository's file has). */
function workspacePatterns(dir = root) {
  const yaml = readFileSync(path.join(dir, 'pnpm-workspace.yaml'), 'utf8');
  const block = yaml.match(/^packages:\s*\n((?:[ \t]+-[^\n]*\n?)+)/m);
  if (!block) throw new Error('pnpm-workspace.yaml lists no packages');
  return [...block[1].matchAll(/-\s*['"]?([^'"\s#]+)['"]?/g)].map((match) => match[1]);
}

/** Every workspace package: { dir (absolute), relative (to the root), manifest }. */
function workspacePackages(dir = root) {
  const folders = workspacePatterns(dir).flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [pattern];
    const parent = pattern.slice(0, -2);
    return readdirSync(path.join(dir, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${parent}/${entry.name}`);
  });
  return folders
    .filter((relative) => existsSync(path.join(dir, relative, 'package.json')))
    .map((relative) => ({
      dir: path.join(dir, relative),
      relative,
      manifest: JSON.parse(readFileSync(path.join(dir, relative, 'package.json'), 'utf8')),
    }));
}

module.exports = { root, workspacePackages };
