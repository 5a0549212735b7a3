import type { FastifyInstance } from 'fastify';

export interface RouteInfo {
  url: string;
  methods: string[];
}

/**
 * Every route the app serves, read from Fastify's route tree (so a route added later is covered
 * without editing the tests): wildcard and parametric routes are left out.
 */
export function appRoutes(app: FastifyInstance): RouteInfo[] {
  const out: RouteInfo[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│ ]*)[├└]── (.+?)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const level = m[1]!.length / 4;
    stack.length = level;
    const url = (stack[level - 1] ?? '') + m[2]!;
    stack[level] = url;
    if (!m[3] || url.includes('*') || url.includes(':')) continue;
    out.push({ url, methods: m[3].split(', ').filter((x) => x !== 'HEAD') });
  }
  return out;
}
