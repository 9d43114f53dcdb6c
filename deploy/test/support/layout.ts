import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** deploy/, the folder these specs check. */
export const DEPLOY_DIR = path.resolve(__dirname, '../..');
export const REPOSITORY_ROOT = path.resolve(DEPLOY_DIR, '..');

/** Every folder under deploy/ with a kustomization.yaml (base, overlays, extras), relative to deploy/. */
export function kustomizationFolders(folder = DEPLOY_DIR): string[] {
  const here = existsSync(path.join(folder, 'kustomization.yaml')) ? [path.relative(DEPLOY_DIR, folder)] : [];
  const below = readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'test')
    .flatMap((entry) => kustomizationFolders(path.join(folder, entry.name)));
  return [...here, ...below];
}

/** The environments an operator applies: deploy/overlays/<name>. */
export function overlayFolders(): string[] {
  return kustomizationFolders().filter((folder) => folder.startsWith(`overlays${path.sep}`));
}

/** The Secret the operator creates (README, "Deploying to Kubernetes"), and the keys it holds. */
export const SECRET_NAME = 'herald-secrets';
export const SECRET_KEYS = ['DATABASE_URL', 'HERALD_ADMIN_KEY'];
