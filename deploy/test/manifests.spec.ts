import { parseHeraldConfig } from '@herald/core';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { schemaProblems, unknownFieldProblems } from './support/kubernetes-schemas';
import { Container, containersOf, imageName, KubeObject, podSpecOf, renderKustomization } from './support/kustomize';
import { DEPLOY_DIR, kustomizationFolders, overlayFolders, REPOSITORY_ROOT, SECRET_KEYS, SECRET_NAME } from './support/layout';

type Labels = Record<string, string>;
type Probe = { httpGet?: { path: string; port: string | number } };
type PodSpec = {
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  volumes?: { name: string; emptyDir?: object }[];
  initContainers?: Container[];
  containers: Container[];
};

const render = (folder: string) => renderKustomization(path.join(DEPLOY_DIR, folder));
const find = (objects: KubeObject[], kind: string, name: string) => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found;
};
const podLabels = (object: KubeObject): Labels => (object.spec as { template: { metadata: { labels: Labels } } }).template.metadata.labels;
const selects = (selector: Labels, labels: Labels) => Object.entries(selector).every(([key, value]) => labels[key] === value);
const configData = (objects: KubeObject[]) => find(objects, 'ConfigMap', 'herald-config').data as Record<string, string>;
const containerNamed = (object: KubeObject, name: string) => {
  const container = containersOf(object).find((candidate) => candidate.name === name);
  if (!container) throw new Error(`${object.kind} ${object.metadata.name} has no container ${name}`);
  return container;
};
/** The number a probe's port means: a named port of the container, or a number. */
const probePort = (container: Container, probe: Probe): number => {
  const port = probe.httpGet?.port;
  if (typeof port === 'number') return port;
  const named = (container.ports as { name: string; containerPort: number }[] | undefined)?.find((candidate) => candidate.name === port);
  if (!named) throw new Error(`${container.name}: probe port ${String(port)} is not one of its ports`);
  return named.containerPort;
};

describe('every kustomization under deploy/', () => {
  const folders = kustomizationFolders();

  it('finds the base, the overlays and the optional extras', () => {
    expect(folders.sort()).toEqual(
      expect.arrayContaining(['base', 'overlays/production', 'overlays/staging', 'extras/monitoring', 'extras/worker-autoscaling']),
    );
  });

  it.each(folders)('%s renders, and each object is valid against the Kubernetes API schema of its kind', (folder) => {
    const objects = render(folder);
    expect(objects.length).toBeGreaterThan(0);
    expect(
      objects.flatMap((object) => schemaProblems(object).map((problem) => `${object.kind} ${object.metadata.name}: ${problem}`)),
    ).toEqual([]);
  });

  it('uses no field the Kubernetes API does not know, in any of them', () => {
    expect(unknownFieldProblems(folders.flatMap(render))).toEqual([]);
  });

  it('would catch a misspelt field and a wrong type (the checks above are not vacuous)', () => {
    const [job] = render('base').filter((object) => object.kind === 'Job');
    const container = containersOf(job)[0];
    container.securityContext = { readOnlyRootFilesytem: true };
    expect(unknownFieldProblems([job]).join('\n')).toMatch(/readOnlyRootFilesytem/);
    (job.spec as { backoffLimit: unknown }).backoffLimit = 'six';
    expect(schemaProblems(job).join('\n')).toMatch(/backoffLimit must be integer/);
  });
});

describe.each(overlayFolders())('the %s overlay', (overlay) => {
  const objects = render(overlay);
  const namespace = (readFileSync(path.join(DEPLOY_DIR, overlay, 'kustomization.yaml'), 'utf8').match(/^namespace: (\S+)$/m) ?? [])[1];
  const workloads = objects.filter((object) => podSpecOf(object) !== null);
  const api = find(objects, 'Deployment', 'herald-api');
  const worker = find(objects, 'Deployment', 'herald-worker');
  const config = configData(objects);

  it('holds what PRODUCT.md §18 lists, in its own namespace, which it creates', () => {
    for (const [kind, name] of [
      ['Deployment', 'herald-api'],
      ['Deployment', 'herald-worker'],
      ['Job', 'herald-migrate'],
      ['Service', 'herald-api'],
      ['PodDisruptionBudget', 'herald-api'],
      ['PodDisruptionBudget', 'herald-worker'],
      ['HorizontalPodAutoscaler', 'herald-api'],
      ['NetworkPolicy', 'herald-api'],
      ['NetworkPolicy', 'herald-worker'],
      ['ConfigMap', 'herald-config'],
      ['Namespace', namespace],
    ])
      expect(find(objects, kind, name)).toBeDefined();
    for (const object of objects.filter((candidate) => candidate.kind !== 'Namespace')) expect(object.metadata.namespace).toBe(namespace);
  });

  it('runs every container as a non-root user, on a read-only root filesystem, with no privileges, within set resources', () => {
    for (const workload of workloads) {
      const pod = podSpecOf(workload) as PodSpec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
      expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
      for (const container of containersOf(workload)) {
        const where = `${workload.metadata.name}/${container.name}`;
        expect({ where, securityContext: container.securityContext }).toEqual({
          where,
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        });
        const resources = container.resources as { requests: Labels; limits: Labels };
        expect({ where, requests: Object.keys(resources.requests).sort(), limits: Object.keys(resources.limits).sort() }).toEqual({
          where,
          requests: ['cpu', 'memory'],
          limits: ['cpu', 'memory'],
        });
        // The one writable place: an emptyDir at /tmp. Every mount names one of the pod's volumes.
        const mounts = container.volumeMounts as { name: string; mountPath: string }[];
        expect(mounts.map((mount) => mount.mountPath)).toEqual(['/tmp']);
        for (const mount of mounts) expect(pod.volumes?.find((volume) => volume.name === mount.name)?.emptyDir).toBeDefined();
      }
    }
  });

  it('configures every container from herald-config and the herald-secrets Secret, and Herald accepts that configuration', () => {
    for (const container of workloads.flatMap(containersOf)) {
      expect(container.envFrom).toEqual([{ configMapRef: { name: 'herald-config' } }, { secretRef: { name: SECRET_NAME } }]);
    }
    const secret = Object.fromEntries(
      SECRET_KEYS.map((key) => [key, key === 'DATABASE_URL' ? 'postgresql://herald@postgres:5432/herald' : 'an-admin-key-of-24-chars']),
    );
    const parsed = parseHeraldConfig({ ...config, ...secret });
    expect(parsed.http.host).toBe('0.0.0.0');
    // The README's command that creates the Secret names exactly its keys.
    const readme = readFileSync(path.join(REPOSITORY_ROOT, 'README.md'), 'utf8');
    // The command, with its continuation lines (each ending in a backslash).
    const lines = readme.split('\n');
    const first = lines.findIndex((line) => line.includes(`create secret generic ${SECRET_NAME}`));
    expect(first).toBeGreaterThanOrEqual(0);
    const last = lines.findIndex((line, index) => index >= first && !line.trimEnd().endsWith('\\'));
    const create = lines.slice(first, last + 1).join('\n');
    expect([...create.matchAll(/--from-literal=([A-Z_]+)=/g)].map((match) => match[1]).sort()).toEqual([...SECRET_KEYS].sort());
  });

  it("probes the api's /readyz and /healthz, and the worker's /metrics, on the ports herald-config gives them", () => {
    const apiContainer = containerNamed(api, 'api');
    const readiness = apiContainer.readinessProbe as Probe;
    const liveness = apiContainer.livenessProbe as Probe;
    expect(readiness.httpGet?.path).toBe('/readyz');
    expect(liveness.httpGet?.path).toBe('/healthz');
    expect(probePort(apiContainer, readiness)).toBe(Number(config.PORT));
    expect(probePort(apiContainer, liveness)).toBe(Number(config.PORT));
    const workerContainer = containerNamed(worker, 'worker');
    const workerLiveness = workerContainer.livenessProbe as Probe;
    expect(workerLiveness.httpGet?.path).toBe('/metrics');
    expect(probePort(workerContainer, workerLiveness)).toBe(Number(config.HERALD_WORKER_METRICS_PORT));
  });

  it('runs the migration as a Job, and starts the api and the worker only once the database matches their schema', () => {
    const job = find(objects, 'Job', 'herald-migrate');
    // sh refuses to go on without DATABASE_URL (the cli would otherwise migrate an embedded database).
    expect(containersOf(job).map((container) => container.command?.join(' '))).toEqual([
      expect.stringMatching(/^sh -c : "\$\{DATABASE_URL:\?[^}]+\}" && exec node apps\/cli\/dist\/main\.js migrate$/),
    ]);
    for (const deployment of [api, worker]) {
      const [wait] = (podSpecOf(deployment) as PodSpec).initContainers ?? [];
      expect(wait.command?.join(' ')).toMatch(/until .*node apps\/cli\/dist\/main\.js migrate --check/);
      expect(wait.image).toBe(containersOf(job)[0].image);
    }
  });

  it('connects its objects: the Service, budgets, policies and autoscaler select pods and workloads that exist', () => {
    const service = find(objects, 'Service', 'herald-api').spec as { selector: Labels; ports: { targetPort: string }[] };
    expect(selects(service.selector, podLabels(api))).toBe(true);
    expect(selects(service.selector, podLabels(worker))).toBe(false);
    const apiPorts = (containerNamed(api, 'api').ports as { name: string }[]).map((port) => port.name);
    for (const port of service.ports) expect(apiPorts).toContain(port.targetPort);
    for (const [kind, name, target] of [
      ['PodDisruptionBudget', 'herald-api', api],
      ['PodDisruptionBudget', 'herald-worker', worker],
      ['NetworkPolicy', 'herald-api', api],
      ['NetworkPolicy', 'herald-worker', worker],
    ] as const) {
      const spec = find(objects, kind, name).spec as { selector?: { matchLabels: Labels }; podSelector?: { matchLabels: Labels } };
      expect(selects((spec.selector ?? spec.podSelector)!.matchLabels, podLabels(target))).toBe(true);
    }
    const migrationPolicy = find(objects, 'NetworkPolicy', 'herald-migrate').spec as { podSelector: { matchLabels: Labels } };
    expect(selects(migrationPolicy.podSelector.matchLabels, podLabels(find(objects, 'Job', 'herald-migrate')))).toBe(true);
    const hpa = find(objects, 'HorizontalPodAutoscaler', 'herald-api').spec as { scaleTargetRef: { kind: string; name: string } };
    expect(find(objects, hpa.scaleTargetRef.kind, hpa.scaleTargetRef.name)).toBe(api);
  });

  it('pulls every image from where the overlay says, and keeps the commands of the base', () => {
    const base = render('base');
    for (const workload of workloads) {
      const baseWorkload = find(base, workload.kind, workload.metadata.name);
      for (const container of containersOf(workload)) {
        const baseContainer = containerNamed(baseWorkload, container.name);
        expect(imageName(container.image)).not.toBe(imageName(baseContainer.image));
        expect([container.command, container.args]).toEqual([baseContainer.command, baseContainer.args]);
      }
    }
  });
});
