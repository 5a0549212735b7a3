import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ownAccount } from '../../auth/permissions.js';
import { parsePublicKey } from '../../auth/ssh-keys.js';
import type { Core } from '../../core.js';
import type { SshKey } from '../../db/user-keys.js';
import { BadRequest, Exists, NotFound } from '../../errors.js';
import { isoTime } from '../../fs/objects.js';
import { apiRoute } from '../route.js';
import { pageShape, sshKeyShape } from '../shapes.js';
import { deleteOwnKeyRoute, keyTitle } from './own-keys.js';
import { int, pageOf, pageQuery } from '../validation.js';
import { adminChange } from '../admin-change.js';

export const keyJson = (k: SshKey) => ({
  id: k.id,
  title: k.title,
  fingerprint: k.fingerprint,
  added_time: isoTime(k.addedTime),
  last_used_time: isoTime(k.lastUsedTime),
});

/** `/api/me/sshkey/*` (own keys) and `/api/admin/user/sshkey/*` (any user's). */
export function sshKeyRoutes(app: FastifyInstance, core: Core): void {
  const repo = () => core.repos.sshKeys;

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/me/sshkey/list',
    output: pageShape(sshKeyShape),
    auth: 'user',
    input: pageQuery,
    from: 'query',
    handler: async ({ input, principal }) => {
      const { page, perPage } = pageOf(input);
      const { keys, total } = await repo().pageOfUser(ownAccount(principal.user).id, page, perPage);
      return { content: keys.map(keyJson), total };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/me/sshkey/add',
    // OpenList answers a taken title 500 with the text.
    codes: [['Exists', 500]],
    output: z.null(),
    auth: 'user',
    input: z.object({ title: keyTitle(), key: z.string({ error: 'key is required' }) }),
    handler: ({ input, principal, req }) =>
      adminChange(core, { principal, req }, 'key_create', `ssh:${input.title}`, async () => {
        const user = ownAccount(principal.user);
        const parsed = parsePublicKey(input.key);
        if (!parsed) throw new BadRequest('provided key invalid');
        if (await repo().byName(user.id, input.title)) throw new Exists('key with the same title already exists');
        await repo().create({ userId: user.id, title: input.title, fingerprint: parsed.fingerprint, keyStr: parsed.text, addedTime: Date.now(), lastUsedTime: Date.now() });
        return null;
      }),
  });

  deleteOwnKeyRoute(app, core, '/api/me/sshkey/delete', repo);

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/user/sshkey/list',
    output: pageShape(sshKeyShape),
    auth: 'admin',
    input: pageQuery.extend({ uid: int() }),
    from: 'query',
    handler: async ({ input }) => {
      const { page, perPage } = pageOf(input);
      const { keys, total } = await repo().pageOfUser(input.uid, page, perPage);
      return { content: keys.map(keyJson), total };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/user/sshkey/delete',
    output: z.null(),
    auth: 'admin',
    input: z.object({ id: int() }),
    from: 'query',
    handler: ({ input, principal, req }) =>
      adminChange(core, { principal, req }, 'key_delete', `/api/admin/user/sshkey/delete?id=${input.id}`, async () => {
        if (!(await repo().byId(input.id))) throw new NotFound('key not found');
        await repo().delete(input.id);
        return null;
      }),
  });
}
