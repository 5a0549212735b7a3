import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { VERSION } from '../../version.js';
import { apiRoute } from '../route.js';

export const aboutShape = z.object({
  version: z.string().describe("Atrium's version"),
  api_version: z.string().describe('the API generation clients check for (the version setting)'),
  build: z.string().describe('"bundle <hash>" when run from the built bundle, "source" from the sources'),
  node: z.string().describe('the Node.js version'),
  platform: z.string(),
  database: z.string().describe('sqlite3, postgres or mysql'),
  cluster: z.boolean().describe('several processes share the state through Redis'),
  uptime: z.number().int().describe('seconds since the process started'),
  started_at: z.string().describe('ISO 8601'),
});

/** The bundle's build hash (dist/.build-hash, next to dist/atrium.js), or "source" when run from src/. */
function buildName(): string {
  const here = new URL(import.meta.url);
  if (!/\/dist\/[^/]+\.js$/.test(here.pathname)) return 'source';
  try {
    return `bundle ${readFileSync(new URL('./.build-hash', here), 'utf8').trim().slice(0, 12)}`;
  } catch {
    return 'bundle';
  }
}

/** `GET /api/admin/about`: what the About page shows (no paths, addresses or secrets). */
export function adminAboutRoutes(app: FastifyInstance, core: Core): void {
  const build = buildName();
  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/about',
    auth: 'admin',
    output: aboutShape,
    handler: () => {
      const uptime = process.uptime();
      return {
        version: VERSION.atrium,
        api_version: VERSION.apiVersion,
        build,
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
        database: core.db.type,
        cluster: core.cluster.enabled,
        uptime: Math.floor(uptime),
        started_at: new Date(Date.now() - uptime * 1000).toISOString(),
      };
    },
  });
}
