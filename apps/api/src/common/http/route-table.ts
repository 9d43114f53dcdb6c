import type { FastifyInstance } from 'fastify';

/**
 * Remembers every route Fastify registers so that a request for a known path with the wrong
 * method answers 405 with an Allow header, not 404. Fastify itself does not distinguish them.
 */
export class RouteTable {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];

  listen(fastify: FastifyInstance): void {
    fastify.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+')}/?$`);
      const existing = this.routes.find((r) => r.pattern.source === pattern.source);
      if (existing) methods.forEach((m) => existing.methods.add(m));
      else this.routes.push({ pattern, methods: new Set(methods) });
    });
  }

  /** Methods the path answers to; empty when no route has this path. */
  allowedMethods(url: string): string[] {
    const path = url.split('?')[0];
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (route.pattern.test(path)) route.methods.forEach((m) => methods.add(m));
    }
    return [...methods].sort();
  }
}
