import { HERALD_NODE_FLAGS, parseHeraldConfig } from '@herald/core';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { imageRecipes } from './support/images';
import { REPOSITORY_ROOT } from './support/layout';

type Service = {
  build?: { context: string; target: string };
  environment?: Record<string, string>;
  ports?: string[];
  deploy?: { replicas?: string | number };
  stop_grace_period?: string;
};
const compose = parse(readFileSync(path.join(REPOSITORY_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};
const dockerfile = readFileSync(path.join(REPOSITORY_ROOT, 'Dockerfile'), 'utf8');

/** `${NAME:-default}` → default, `${NAME:?message}` → the sample value a user must give, as compose interpolates. */
function interpolate(value: string, given: Record<string, string>): string {
  return value.replace(/\$\{([A-Z_]+)(?::([-?])([^}]*))?\}/g, (_all, name: string, kind: string | undefined, rest: string) => {
    if (given[name] !== undefined) return given[name];
    if (kind === '-') return rest;
    throw new Error(`docker-compose.yml requires ${name}: ${rest}`);
  });
}

describe('docker-compose.yml and the Dockerfile', () => {
  const { api, worker } = compose.services;

  it('builds the api and the worker from the Dockerfile targets the tests build runtime trees for', () => {
    const targets = imageRecipes().map((recipe) => recipe.target);
    expect(api.build).toEqual({ context: '.', target: 'api' });
    expect(worker.build).toEqual({ context: '.', target: 'worker' });
    expect(targets).toEqual(expect.arrayContaining(['api', 'worker']));
  });

  it("runs both images' processes with Herald's Node flags, which V8 reads only at start", () => {
    const runtimeStage = dockerfile.slice(dockerfile.indexOf('AS runtime'), dockerfile.indexOf('AS api'));
    expect(runtimeStage).toContain(`NODE_OPTIONS=${HERALD_NODE_FLAGS.join(' ')}`);
    for (const service of [api, worker]) expect(Object.keys(service.environment ?? {})).not.toContain('NODE_OPTIONS');
    for (const app of ['api', 'worker']) {
      const manifest = JSON.parse(readFileSync(path.join(REPOSITORY_ROOT, 'apps', app, 'package.json'), 'utf8')) as {
        scripts: { start: string };
      };
      expect(manifest.scripts.start).toBe(`node ${HERALD_NODE_FLAGS.join(' ')} dist/main.js`);
    }
  });

  it("gives both processes an environment Herald's own parser accepts", () => {
    for (const service of [api, worker]) {
      const environment = Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([name, value]) => [
          name,
          interpolate(String(value), { HERALD_ADMIN_KEY: 'compose-admin-key-0123' }),
        ]),
      );
      expect(parseHeraldConfig(environment).database.url).toBe('postgresql://herald:herald@postgres:5432/herald');
    }
  });

  it('scales the worker: a replica count to set, no host port two workers would fight over, time to finish on SIGTERM', () => {
    expect(worker.ports).toBeUndefined();
    expect(interpolate(String(worker.deploy?.replicas), {})).toBe('1');
    expect(interpolate(String(worker.deploy?.replicas), { HERALD_WORKER_REPLICAS: '3' })).toBe('3');
    // Herald's worker exits within 30 s of SIGTERM (PRODUCT.md §7); compose's default is 10 s.
    expect(Number(worker.stop_grace_period?.replace(/s$/, ''))).toBeGreaterThan(30);
  });

  it('publishes the api on the port its image exposes and listens on', () => {
    expect(api.ports).toEqual(['3000:3000']);
    expect(dockerfile).toMatch(/ENV NODE_ENV=production HOST=0\.0\.0\.0 PORT=3000/);
    expect(dockerfile).toMatch(/FROM runtime AS api[\s\S]*?EXPOSE 3000/);
  });

  it('runs both images as an unprivileged user, by number, on a Node LTS line', () => {
    for (const target of ['api', 'worker']) {
      const stage = dockerfile.split(/^FROM /m).find((text) => text.startsWith(`runtime AS ${target}\n`)) ?? '';
      expect({ target, user: stage.match(/^USER (.+)$/m)?.[1] }).toEqual({ target, user: '1000:1000' });
    }
    // Even-numbered Node lines are the LTS ones.
    expect(Number(dockerfile.match(/FROM node:(\d+)-bookworm-slim AS runtime/)?.[1]) % 2).toBe(0);
  });
});
