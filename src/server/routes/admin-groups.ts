import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { groupJson } from '../../auth/groups.js';
import type { Core } from '../../core.js';
import { originOf } from '../../http/origin.js';
import { apiRoute } from '../route.js';
import { groupShape, pageShape } from '../shapes.js';
import { accountFields } from './account-fields.js';
import { int, pageOf, pageQuery } from '../validation.js';

const idQuery = z.object({ id: int() });

export const groupBody = z.object({
  id: int().optional(),
  name: z.string({ error: 'name is required' }),
  permission: int().optional(),
  ...accountFields,
});

/** `/api/admin/group/*` (admin only), declared as the users' routes: by-id verbs take `?id=`. */
export function adminGroupRoutes(app: FastifyInstance, core: Core): void {
  const actor = (username: string, req: Parameters<typeof originOf>[0]) => ({ user: username, origin: originOf(req, 'api') });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/group/list',
    output: pageShape(groupShape),
    auth: 'admin',
    input: pageQuery,
    from: 'query',
    handler: async ({ input }) => {
      const { page, perPage } = pageOf(input);
      const all = await core.groups.list();
      const shown = perPage > 0 ? all.slice((page - 1) * perPage, page * perPage) : all;
      return { content: shown.map(groupJson), total: all.length };
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/group/get',
    output: groupShape,
    auth: 'admin',
    input: idQuery,
    from: 'query',
    handler: async ({ input }) => groupJson(await core.groups.get(input.id)),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/group/create',
    output: z.object({ id: z.number().int() }),
    auth: 'admin',
    input: groupBody,
    handler: async ({ input, principal, req }) => ({ id: await core.groups.create(input, actor(principal.user.username, req)) }),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/group/update',
    output: z.null(),
    auth: 'admin',
    input: groupBody.extend({ id: int() }),
    handler: async ({ input, principal, req }) => {
      await core.groups.update(input, actor(principal.user.username, req));
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/group/delete',
    output: z.null(),
    auth: 'admin',
    input: idQuery,
    from: 'query',
    handler: async ({ input, principal, req }) => {
      await core.groups.delete(input.id, actor(principal.user.username, req));
      return null;
    },
  });
}
