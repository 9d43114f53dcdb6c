import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * A Kubernetes object as parsed from YAML. Typed loosely on purpose: the specs validate it
 * against the Kubernetes API schemas; this file only moves it around.
 */
export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
} & Record<string, unknown>;

/** The kustomization.yaml fields this renderer implements; any other field is refused. */
const SUPPORTED_FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'images', 'replicas', 'patches']);

/** Kinds that are not namespaced, among those Herald's manifests use. */
const CLUSTER_SCOPED_KINDS = new Set(['Namespace']);

interface Kustomization {
  namespace?: string;
  resources?: string[];
  images?: { name: string; newName?: string; newTag?: string }[];
  replicas?: { name: string; count: number }[];
  patches?: { path: string; target: { kind: string; name: string } }[];
}

type PatchOperation = { op: 'add' | 'replace' | 'remove'; path: string; value?: unknown };

/**
 * Renders a kustomization folder the way `kubectl apply -k` does, for the subset of kustomize
 * Herald's manifests use: resources (files and folders), JSON6902 patches with a kind/name
 * target, images, replicas and namespace. Neither kustomize nor kubectl can be installed on the
 * machines this project is tested on, so the specs render with this and validate the result; a
 * field outside the subset fails the render, so the manifests cannot drift into something only
 * the real kustomize would understand. Each patch must match exactly one object.
 */
export function renderKustomization(folder: string): KubeObject[] {
  const file = path.join(folder, 'kustomization.yaml');
  if (!existsSync(file)) throw new Error(`${folder} has no kustomization.yaml`);
  const kustomization = parseSingleDocument(file) as Kustomization & Record<string, unknown>;
  const unsupported = Object.keys(kustomization).filter((field) => !SUPPORTED_FIELDS.has(field));
  if (unsupported.length > 0) throw new Error(`${file}: fields this renderer does not implement: ${unsupported.join(', ')}`);

  const objects = (kustomization.resources ?? []).flatMap((resource) => {
    const target = path.resolve(folder, resource);
    return statSync(target).isDirectory() ? renderKustomization(target) : parseObjects(target);
  });

  for (const patch of kustomization.patches ?? []) {
    const matches = objects.filter((object) => object.kind === patch.target.kind && object.metadata.name === patch.target.name);
    if (matches.length !== 1) throw new Error(`${file}: patch ${patch.path} matches ${matches.length} objects, not 1`);
    const operations = parseSingleDocument(path.resolve(folder, patch.path)) as PatchOperation[];
    for (const operation of operations) applyOperation(matches[0], operation, `${patch.path}`);
  }
  for (const image of kustomization.images ?? []) {
    let used = false;
    for (const container of objects.flatMap(containersOf)) {
      if (imageName(container.image) !== image.name) continue;
      const tag = image.newTag ?? container.image.slice(image.name.length + 1);
      container.image = `${image.newName ?? image.name}${tag ? `:${tag}` : ''}`;
      used = true;
    }
    if (!used) throw new Error(`${file}: no container uses the image ${image.name}`);
  }
  for (const { name, count } of kustomization.replicas ?? []) {
    const workload = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === name);
    if (!workload) throw new Error(`${file}: replicas names ${name}, which is no Deployment here`);
    (workload.spec as { replicas?: number }).replicas = count;
  }
  if (kustomization.namespace) {
    for (const object of objects) if (!CLUSTER_SCOPED_KINDS.has(object.kind)) object.metadata.namespace = kustomization.namespace;
  }
  return objects;
}

/** Every YAML document of a file, each one object with a kind and a name. */
export function parseObjects(file: string): KubeObject[] {
  const documents = parseAllDocuments(readFileSync(file, 'utf8'), { prettyErrors: true });
  return documents
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors.map((error) => error.message).join('; ')}`);
      return document.toJS() as KubeObject | null;
    })
    .filter((object): object is KubeObject => object !== null)
    .map((object) => {
      if (!object.apiVersion || !object.kind || !object.metadata?.name)
        throw new Error(`${file}: a document without apiVersion, kind or metadata.name`);
      return object;
    });
}

function parseSingleDocument(file: string): unknown {
  const documents = parseAllDocuments(readFileSync(file, 'utf8'), { prettyErrors: true });
  if (documents.length !== 1 || documents[0].errors.length > 0) throw new Error(`${file}: expected one valid YAML document`);
  return documents[0].toJS();
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  [field: string]: unknown;
}

/** The containers and init containers of a workload (Deployment, Job), or none. */
export function containersOf(object: KubeObject): Container[] {
  const pod = podSpecOf(object);
  return pod ? [...((pod.initContainers as Container[] | undefined) ?? []), ...((pod.containers as Container[] | undefined) ?? [])] : [];
}

export function podSpecOf(object: KubeObject): Record<string, unknown> | null {
  if (object.kind !== 'Deployment' && object.kind !== 'Job') return null;
  return ((object.spec as { template: { spec: Record<string, unknown> } }).template.spec as Record<string, unknown>) ?? null;
}

/** `registry/name:tag` → `registry/name` (a digest is not used in these manifests). */
export function imageName(image: string): string {
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  return colon === -1 ? image : image.slice(0, colon);
}

/** RFC 6902 add, replace and remove, with RFC 6901 paths ("-" appends to an array). */
function applyOperation(target: unknown, operation: PatchOperation, where: string): void {
  const tokens = operation.path
    .split('/')
    .slice(1)
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (tokens.length === 0) throw new Error(`${where}: the path "${operation.path}" names the whole object`);
  let parent: unknown = target;
  for (const token of tokens.slice(0, -1)) {
    parent = (parent as Record<string, unknown>)?.[token];
    if (typeof parent !== 'object' || parent === null) throw new Error(`${where}: ${operation.path} does not exist`);
  }
  const last = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    const exists = Number.isInteger(index) && index >= 0 && index < parent.length;
    if (operation.op === 'add') parent.splice(index, 0, operation.value);
    else if (!exists) throw new Error(`${where}: ${operation.path} does not exist`);
    else if (operation.op === 'replace') parent[index] = operation.value;
    else parent.splice(index, 1);
    return;
  }
  const record = parent as Record<string, unknown>;
  if (operation.op !== 'add' && !(last in record)) throw new Error(`${where}: ${operation.path} does not exist`);
  if (operation.op === 'remove') delete record[last];
  else record[last] = operation.value;
}
