import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { REPOSITORY_ROOT } from './support/layout';

/** Herald is Apache-2.0 (PRODUCT.md §18): the LICENSE file and every package's `license` field. */

/** The root and every workspace package's manifest, as pnpm-workspace.yaml lists them (`dir` and `dir/*`). */
function manifests(): { file: string; manifest: { name: string; license?: string } }[] {
  const { packages } = parse(readFileSync(path.join(REPOSITORY_ROOT, 'pnpm-workspace.yaml'), 'utf8')) as { packages: string[] };
  const folders = packages.flatMap((pattern) =>
    pattern.endsWith('/*')
      ? readdirSync(path.join(REPOSITORY_ROOT, pattern.slice(0, -2)), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => path.join(pattern.slice(0, -2), entry.name))
      : [pattern],
  );
  return ['.', ...folders]
    .map((folder) => path.join(REPOSITORY_ROOT, folder, 'package.json'))
    .filter((file) => existsSync(file))
    .map((file) => ({ file: path.relative(REPOSITORY_ROOT, file), manifest: JSON.parse(readFileSync(file, 'utf8')) }));
}

describe('the licence', () => {
  it('is the Apache License 2.0, in LICENSE at the root', () => {
    const text = readFileSync(path.join(REPOSITORY_ROOT, 'LICENSE'), 'utf8');
    expect(text).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004\s+http:\/\/www\.apache\.org\/licenses\/\s+TERMS AND CONDITIONS/);
    expect(text).toContain('END OF TERMS AND CONDITIONS');
  });

  it('is declared in every package.json of the workspace', () => {
    const all = manifests();
    expect(all.length).toBeGreaterThan(8);
    const undeclared = all.filter(({ manifest }) => manifest.license !== 'Apache-2.0');
    expect(undeclared.map(({ file }) => file)).toEqual([]);
  });
});
