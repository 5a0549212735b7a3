import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { NotFound } from '../../errors.js';
import { apiRoute } from '../route.js';
import { metaShape, pageShape } from '../shapes.js';
import { boolish, int, pageOf, pageQuery } from '../validation.js';
import { adminChange } from '../admin-change.js';

const metaBody = z.object({
  id: int().optional(),
  path: z.string({ error: 'path is required' }),
  password: z.string().default(''),
  p_sub: boolish().default(false),
  write: boolish().default(false),
  w_sub: boolish().default(false),
  hide: z.string().default(''),
  h_sub: boolish().default(false),
  readme: z.string().default(''),
  r_sub: boolish().default(false),
  header: z.string().default(''),
  header_sub: boolish().default(false),
  /** The group whose members the rule is for; left out: everyone (create), the rule's own group (update). */
  group_id: int().optional(),
});

/** `/api/admin/meta/*` (admin only). */
export function adminMetaRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/meta/list',
    output: pageShape(metaShape),
    auth: 'admin',
    input: pageQuery,
    from: 'query',
    handler: async ({ input }) => {
      const { page, perPage } = pageOf(input);
      const { metas, total } = await core.repos.metas.list(page, perPage);
      return { content: metas, total };
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/meta/get',
    output: metaShape,
    auth: 'admin',
    input: z.object({ id: int() }),
    from: 'query',
    handler: async ({ input }) => {
      const m = await core.repos.metas.byId(input.id);
      if (!m) throw new NotFound('meta not found');
      return m;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/meta/create',
    // OpenList answers a path that has a meta already 500 with the text.
    codes: [['Exists', 500]],
    output: z.null(),
    auth: 'admin',
    input: metaBody,
    handler: async (ctx) => {
      await adminChange(core, ctx, 'meta_create', ctx.input.path, () => core.metas.create(ctx.input));
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/meta/update',
    // OpenList answers a path that has a meta already 500 with the text.
    codes: [['Exists', 500]],
    output: z.null(),
    auth: 'admin',
    input: metaBody.extend({ id: int() }),
    handler: async (ctx) => {
      await adminChange(core, ctx, 'meta_update', ctx.input.path, () => core.metas.update(ctx.input));
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/meta/delete',
    output: z.null(),
    auth: 'admin',
    input: z.object({ id: int() }),
    from: 'query',
    handler: async (ctx) => {
      const name = [...core.metas.all()].find((l) => l.meta.id === ctx.input.id)?.meta.path ?? String(ctx.input.id);
      await adminChange(core, ctx, 'meta_delete', name, () => core.metas.delete(ctx.input.id));
      return null;
    },
  });
}
