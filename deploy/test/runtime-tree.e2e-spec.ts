import { dropDatabase, testServerUrl, databaseUrl } from '@herald/database/testing';
import { freePort, waitForOk } from '@herald/testing';
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { BASE_IMAGE_PROGRAMS, buildRuntimeTree, ImageRecipe, imageRecipes } from './support/images';
import { Container, containersOf, imageName, KubeObject, podSpecOf, renderKustomization } from './support/kustomize';
import { DEPLOY_DIR, REPOSITORY_ROOT, SECRET_KEYS } from './support/layout';

/**
 * The manifests' commands, run where the images would run them: each image's runtime tree,
 * built as the Dockerfile builds it, with the pod's environment (herald-config and the Secret's
 * keys) and a real PostgreSQL. No Docker engine or cluster is available to these tests; this is
 * the closest check that what `kubectl apply -k` starts would start.
 */
const base = renderKustomization(path.join(DEPLOY_DIR, 'base'));
const workloads = base.filter((object) => podSpecOf(object) !== null);
const config = base.find((object) => object.kind === 'ConfigMap' && object.metadata.name === 'herald-config')!.data as Record<
  string,
  string
>;
const recipes = imageRecipes();
const find = (kind: string, name: string) => base.find((object) => object.kind === kind && object.metadata.name === name)!;
const container = (workload: KubeObject, name: string) => containersOf(workload).find((candidate) => candidate.name === name)!;

/** The base manifests name images `herald-<Dockerfile target>`. */
function recipeOf(image: string): ImageRecipe {
  const recipe = recipes.find((candidate) => `herald-${candidate.target}` === imageName(image));
  if (!recipe) throw new Error(`${image} is none of the Dockerfile's images (${recipes.map((r) => `herald-${r.target}`).join(', ')})`);
  return recipe;
}

/** The programs a command runs, with each one's arguments; `sh -c` scripts are split at their separators. */
function invocations(command: string[]): string[][] {
  if (command[0] === 'sh' && command[1] === '-c') {
    return (
      command[2]
        .split(/\$\(|&&|\|\||[;|()]|\b(?:until|while|do|done|then|fi)\b/)
        .map((segment) => segment.trim().split(/\s+/).filter(Boolean))
        // `exec program …` runs the program; `:` and assignments are the shell's own.
        .map((words) => (words[0] === 'exec' ? words.slice(1) : words))
        .filter((words) => words.length > 0 && words[0] !== ':' && !/^[A-Za-z_]+=/.test(words[0]))
        .concat([['sh']])
    );
  }
  return [command];
}

const every = workloads.flatMap((workload) =>
  containersOf(workload).flatMap((each) => {
    const commands = [each.command ?? [], (each.lifecycle as { preStop?: { exec?: { command: string[] } } })?.preStop?.exec?.command ?? []];
    return commands
      .filter((command) => command.length > 0)
      .map((command) => ({ where: `${workload.metadata.name}/${each.name}`, each, command }));
  }),
);

describe("the manifests' commands in the images' runtime trees", () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'herald-deploy-trees-'));
  const trees = new Map<string, string>();
  const children: ChildProcess[] = [];

  beforeAll(() => {
    expect(recipes.map((recipe) => recipe.target).sort()).toEqual(['api', 'worker']);
    for (const recipe of recipes) {
      const tree = path.join(scratch, recipe.target);
      buildRuntimeTree(recipe, tree);
      trees.set(recipe.target, tree);
    }
  });

  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  });

  /** Runs a container's command in its image's tree, with the pod's environment: herald-config's, the Secret's keys given here. */
  function runContainer(each: Container, secretAndExtra: Record<string, string>) {
    const tree = trees.get(recipeOf(each.image).target)!;
    const [program, ...args] = each.command!;
    // The container's environment only: the image's (PATH, NODE_ENV), envFrom's, and HOME
    // pointing into the read-only tree (the image's user has no writable home there either).
    const env = {
      PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
      NODE_ENV: 'production',
      HOME: path.join(tree, 'home'),
      ...config,
      ...secretAndExtra,
    };
    const child = spawn(program, args, { cwd: tree, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    children.push(child);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, exited, output: () => output };
  }

  it.each(every.map((entry) => [entry.where, entry.command.join(' '), entry] as const))(
    '%s: `%s` runs only what its image holds',
    (_where, _command, { each, command }) => {
      const recipe = recipeOf(each.image);
      expect(each.workingDir).toBe(recipe.workdir);
      for (const [program, script] of invocations(command)) {
        expect(BASE_IMAGE_PROGRAMS).toContain(program);
        if (program === 'node') expect(existsSync(path.join(trees.get(recipe.target)!, script))).toBe(true);
      }
    },
  );

  it("holds production dependencies only: none of the workspace's build and test tools", () => {
    const tools = ['jest', 'typescript', 'eslint', 'prettier', 'turbo', '@swc/core', 'kubernetes-models', 'openapi-typescript'];
    for (const [target, tree] of trees) {
      expect({ target, present: tools.filter((tool) => existsSync(path.join(tree, 'node_modules', tool))) }).toEqual({
        target,
        present: [],
      });
    }
  });

  it("runs only what its tree holds in each image's own CMD and HEALTHCHECK (docker compose uses them)", () => {
    const dockerfile = readFileSync(path.join(REPOSITORY_ROOT, 'Dockerfile'), 'utf8');
    for (const recipe of recipes) {
      const stage = dockerfile.split(/^FROM /m).find((text) => text.startsWith(`runtime AS ${recipe.target}\n`)) ?? '';
      const scripts = [...stage.matchAll(/^(?:CMD|HEALTHCHECK)[^\n]*$/gm)].flatMap((line) =>
        [...line[0].matchAll(/node"?,? "?(apps\/[^\s"]+)/g)].map((match) => match[1]),
      );
      expect(scripts.length).toBeGreaterThan(0);
      for (const script of scripts)
        expect({ target: recipe.target, script, exists: existsSync(path.join(trees.get(recipe.target)!, script)) }).toEqual({
          target: recipe.target,
          script,
          exists: true,
        });
    }
  });

  it('migrates with the Job while the initContainers wait, then serves the probes, stops on SIGTERM, and writes nothing in the trees', async () => {
    const before = new Map([...trees].map(([target, tree]) => [target, snapshot(tree)]));
    const database = `herald_deploy_${process.pid}_${Date.now()}`;
    const server = new pg.Client({ connectionString: testServerUrl() });
    await server.connect();
    await server.query(`CREATE DATABASE "${database}"`);
    await server.end();
    const secret: Record<string, string> = {
      DATABASE_URL: databaseUrl(testServerUrl(), database),
      HERALD_ADMIN_KEY: 'deploy-test-admin-key-0123',
    };
    expect(Object.keys(secret).sort()).toEqual([...SECRET_KEYS].sort());
    try {
      const run = (each: Container, extra: Record<string, string> = {}) => runContainer(each, { ...secret, ...extra });

      const apiWait = run(container(find('Deployment', 'herald-api'), 'wait-for-migrations'));
      const workerWait = run(container(find('Deployment', 'herald-worker'), 'wait-for-migrations'));
      // On an empty database both keep waiting, saying why, one line per check.
      await waitFor(() => /herald: the database differs from prisma\/schema\.prisma/.test(apiWait.output()), 30_000, 'the first check');
      expect([apiWait.child.exitCode, workerWait.child.exitCode]).toEqual([null, null]);

      const job = run(container(find('Job', 'herald-migrate'), 'migrate'));
      expect(await job.exited).toBe(0);
      expect(job.output()).toMatch(/herald: applied \d+_init/);
      expect(await withTimeout(apiWait.exited, 30_000, 'the api initContainer to let go')).toBe(0);
      expect(await withTimeout(workerWait.exited, 30_000, 'the worker initContainer to let go')).toBe(0);

      const apiPort = await freePort();
      const api = run(container(find('Deployment', 'herald-api'), 'api'), { PORT: String(apiPort) });
      const apiProbes = container(find('Deployment', 'herald-api'), 'api') as unknown as Record<string, { httpGet: { path: string } }>;
      const gaveUp = (process: { child: ChildProcess; output: () => string }) => () =>
        process.child.exitCode !== null ? `exited ${process.child.exitCode}: ${process.output()}` : null;
      await waitForOk(`http://127.0.0.1:${apiPort}${apiProbes.readinessProbe.httpGet.path}`, 60_000, gaveUp(api));
      await waitForOk(`http://127.0.0.1:${apiPort}${apiProbes.livenessProbe.httpGet.path}`, 5_000, gaveUp(api));

      const metricsPort = await freePort();
      const worker = run(container(find('Deployment', 'herald-worker'), 'worker'), { HERALD_WORKER_METRICS_PORT: String(metricsPort) });
      const workerProbe = container(find('Deployment', 'herald-worker'), 'worker') as unknown as Record<
        string,
        { httpGet: { path: string } }
      >;
      await waitForOk(`http://127.0.0.1:${metricsPort}${workerProbe.livenessProbe.httpGet.path}`, 60_000, gaveUp(worker));

      for (const [name, process] of [
        ['herald-api', api],
        ['herald-worker', worker],
      ] as const) {
        const grace = (podSpecOf(find('Deployment', name)) as { terminationGracePeriodSeconds: number }).terminationGracePeriodSeconds;
        process.child.kill('SIGTERM');
        expect(await withTimeout(process.exited, grace * 1000, `${name} to stop on SIGTERM`)).toBe(0);
      }
      for (const [target, tree] of trees) expect({ target, files: snapshot(tree) }).toEqual({ target, files: before.get(target) });
    } finally {
      await dropDatabase(testServerUrl(), database);
    }
  });

  it('refuses to migrate or wait without DATABASE_URL, naming the Secret, instead of using an embedded database', async () => {
    const before = new Map([...trees].map(([target, tree]) => [target, snapshot(tree)]));
    for (const each of [
      container(find('Job', 'herald-migrate'), 'migrate'),
      container(find('Deployment', 'herald-api'), 'wait-for-migrations'),
    ]) {
      const run = runContainer(each, { HERALD_ADMIN_KEY: 'deploy-test-admin-key-0123' });
      expect(await withTimeout(run.exited, 10_000, `${each.name} to stop`)).not.toBe(0);
      expect(run.output()).toContain('DATABASE_URL: is not set: add it to the herald-secrets Secret');
    }
    for (const [target, tree] of trees) expect({ target, files: snapshot(tree) }).toEqual({ target, files: before.get(target) });
  });
});

/** Every file and folder of a tree with its size and modification time: what a write would change. */
function snapshot(tree: string): Map<string, string> {
  const entries = new Map<string, string>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      const stat = statSync(full, { throwIfNoEntry: false });
      entries.set(path.relative(tree, full), stat ? `${stat.size} ${stat.mtimeMs}` : 'dangling');
      if (entry.isDirectory()) walk(full);
    }
  };
  walk(tree);
  return entries;
}

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
