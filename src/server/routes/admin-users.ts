import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { userJson } from '../../auth/accounts.js';
import type { Core } from '../../core.js';
import { NotFound } from '../../errors.js';
import { apiRoute } from '../route.js';
import { pageShape, userShape } from '../shapes.js';
import { accountFields } from './account-fields.js';
import { boolish, int, pageOf, pageQuery } from '../validation.js';
import { originOf } from '../../http/origin.js';
import type { Actor } from '../../auth/accounts.js';

const idQuery = z.object({ id: int() });

export const userBody = z.object({
  id: int().optional(),
  username: z.string({ error: 'username is required' }),
  password: z.string().optional(),
  base_path: z.string().optional(),
  role: int().optional(),
  disabled: boolish().optional(),
  permission: int().optional(),
  sso_id: z.string().optional(),
  allow_ldap: boolish().optional(),
  group_ids: z.array(int()).max(1000).optional(),
  ...accountFields,
});

/** `/api/admin/user/*` (admin only). By-id verbs take `?id=` in the query, as the original. */
export function adminUserRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/user/list',
    output: pageShape(userShape),
    auth: 'admin',
    input: pageQuery,
    from: 'query',
    handler: async ({ input }) => {
      const { page, perPage } = pageOf(input);
      const { users, total } = await core.repos.users.list(page, perPage);
      return { content: users.map((u) => userJson(u)), total };
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/user/get',
    output: userShape,
    auth: 'admin',
    input: idQuery,
    from: 'query',
    handler: async ({ input }) => userJson(await core.accounts.getUser(input.id)),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/user/create',
    output: z.null(),
    auth: 'admin',
    input: userBody,
    handler: async ({ input, principal, req }) => {
      await core.accounts.createUser(input, { user: principal.user.username, origin: originOf(req, 'api') });
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/user/update',
    output: z.null(),
    auth: 'admin',
    input: userBody.extend({ id: int() }),
    handler: async ({ input, principal, req }) => {
      await core.accounts.updateUser(input, { user: principal.user.username, origin: originOf(req, 'api') });
      return null;
    },
  });

  for (const [verb, act] of [
    ['delete', (id: number, actor: Actor) => core.accounts.deleteUser(id, actor)],
    ['cancel_2fa', (id: number) => core.accounts.cancel2fa(id)],
  ] as const) {
    apiRoute(app, core, {
      method: 'POST',
      url: `/api/admin/user/${verb}`,
      // OpenList answers a user that is gone 500 (`failed get old user: record not found`).
      codes: [['NotFound', 500]],
    output: z.null(),
      auth: 'admin',
      input: idQuery,
      from: 'query',
      handler: async ({ input, principal, req }) => {
        await act(input.id, { user: principal.user.username, origin: originOf(req, 'api') });
        return null;
      },
    });
  }

  // Users are read from the database on every request (no per-process copy that could go
  // stale across processes), so dropping "the cache" only has to confirm the user exists.
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/user/del_cache',
    output: z.null(),
    auth: 'admin',
    input: z.object({ username: z.string().min(1, 'username is required') }),
    from: 'query',
    handler: async ({ input }) => {
      if (!(await core.repos.users.byUsername(input.username))) throw new NotFound('user not found');
      return null;
    },
  });
}
