import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { cleanPath } from '../../util/paths.js';
import { ANY, apiRoute } from '../route.js';
import { pageShape } from '../shapes.js';
import { int } from '../validation.js';
import { originOf } from '../../http/origin.js';

const searchBody = z.object({
  parent: z.string().default('/'),
  keywords: z.string().default(''),
  scope: int()
    .default(0)
    .refine((n) => n >= 0 && n <= 2, 'scope must be 0 (all), 1 (folders) or 2 (files)'),
  page: int().default(0),
  per_page: int().default(0),
  password: z.string().default(''),
});

const updateBody = z.object({
  paths: z.array(z.string()).min(1, 'paths is required'),
  max_depth: int().default(-1),
  /** Prefixes this update leaves out, on top of the `ignore_paths` setting (the OpenList front end sends it). */
  ignore_paths: z.array(z.string()).max(1000).default([]),
});

/** `/api/fs/search` and the admin's `/api/admin/index/*` (wire-api.md §14). */
export function searchRoutes(app: FastifyInstance, core: Core): void {
  const search = core.search;
  const background = (p: Promise<void>) => void p.catch((err) => core.log.error({ err }, 'index job failed'));

  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/search',
    output: pageShape(z.object({ parent: z.string(), name: z.string(), is_dir: z.boolean(), size: z.number(), type: z.number().int() })),
    auth: 'user',
    from: 'any',
    input: searchBody,
    handler: ({ input, principal, req }) => search.search(core.views.for(principal.user, { front: 'api', origin: originOf(req, 'api'), password: input.password }), input),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/index/build',
    output: z.null(),
    auth: 'admin',
    handler: () => {
      search.requireAvailable();
      background(search.indexer.build());
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/index/update',
    output: z.null(),
    auth: 'admin',
    input: updateBody,
    handler: ({ input }) => {
      search.requireAvailable();
      background(search.indexer.update([...new Set(input.paths.map(cleanPath))], input.max_depth, input.ignore_paths.filter((p) => p.trim() !== '').map(cleanPath)));
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/index/stop',
    output: z.null(),
    auth: 'admin',
    handler: () => {
      search.requireAvailable();
      search.indexer.stop();
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/index/clear',
    output: z.null(),
    auth: 'admin',
    handler: async () => {
      search.requireAvailable();
      await search.indexer.clear();
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/index/progress',
    output: z.object({ obj_count: z.number().int(), is_done: z.boolean(), last_done_time: z.string().nullable(), error: z.string() }),
    auth: 'admin',
    handler: () => {
      search.requireAvailable();
      return search.progress();
    },
  });
}
