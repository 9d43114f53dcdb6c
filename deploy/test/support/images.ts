import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPOSITORY_ROOT } from './layout';

/** One image the Dockerfile builds: its target, the workspace package whose runtime tree it holds, and where. */
export interface ImageRecipe {
  target: string;
  runtimePackage: string;
  workdir: string;
}

/**
 * Reads the Dockerfile rather than repeating it, so the specs follow it: each
 * `node scripts/runtime-tree.js /out/<tree> <package>` line, each `FROM runtime AS <target>`
 * stage that `COPY --from=build /out/<tree>`s into the runtime stage's WORKDIR.
 */
export function imageRecipes(dockerfile = path.join(REPOSITORY_ROOT, 'Dockerfile')): ImageRecipe[] {
  const text = readFileSync(dockerfile, 'utf8');
  const trees = new Map(
    [...text.matchAll(/node scripts\/runtime-tree\.js \/out\/(\S+) (@herald\/\S+)/g)].map((match) => [match[1], match[2]]),
  );
  const workdir = text.match(/FROM \S+ AS runtime\nWORKDIR (\S+)/)?.[1];
  if (!workdir) throw new Error('Dockerfile: no WORKDIR in the runtime stage');
  return [...text.matchAll(/FROM runtime AS (\S+)\n(?:#[^\n]*\n)*COPY --from=build \/out\/(\S+) (\S+)/g)].map(([, target, tree, into]) => {
    const runtimePackage = trees.get(tree);
    if (!runtimePackage) throw new Error(`Dockerfile: the ${target} image copies /out/${tree}, which no runtime-tree.js line writes`);
    if (into !== workdir) throw new Error(`Dockerfile: the ${target} image copies its tree to ${into}, not the WORKDIR ${workdir}`);
    return { target, runtimePackage, workdir };
  });
}

/** Writes an image's runtime tree into `destination` as the Dockerfile's build stage does. */
export function buildRuntimeTree(recipe: ImageRecipe, destination: string): void {
  const result = spawnSync(process.execPath, [path.join(REPOSITORY_ROOT, 'scripts/runtime-tree.js'), destination, recipe.runtimePackage], {
    cwd: REPOSITORY_ROOT,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`runtime-tree.js ${recipe.runtimePackage} failed:\n${result.stdout}\n${result.stderr}`);
}

/**
 * The programs a command may run from the base image rather than from Herald's tree
 * (node:24-bookworm-slim: Node on PATH, Debian's dash as sh, coreutils' sleep and head).
 */
export const BASE_IMAGE_PROGRAMS = new Set(['node', 'sh', 'sleep', 'head', 'echo']);
