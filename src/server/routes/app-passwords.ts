import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import type { AppPassword } from '../../db/user-keys.js';
import { isoTime } from '../../fs/objects.js';
import { apiRoute } from '../route.js';
import { appPasswordShape, pageShape } from '../shapes.js';
import { int } from '../validation.js';
import { adminChange } from '../admin-change.js';

const entryJson = (a: AppPassword) => ({
  id: a.id,
  name: a.name,
  added_time: isoTime(a.addedTime),
  /** Empty until the password is first used. */
  last_used_time: a.lastUsedTime > 0 ? isoTime(a.lastUsedTime) : '',
});

/** `/api/me/app_password/*`: one's own app passwords for WebDAV, SFTP and FTP. */
export function appPasswordRoutes(app: FastifyInstance, core: Core): void {
  const service = () => core.accounts.appPasswords;

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/me/app_password/list',
    output: pageShape(appPasswordShape),
    auth: 'user',
    handler: async ({ principal }) => {
      const entries = await service().list(principal.user);
      return { content: entries.map(entryJson), total: entries.length };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/me/app_password/create',
    output: appPasswordShape.extend({ password: z.string().describe('shown only here') }),
    auth: 'user',
    input: z.object({ name: z.string({ error: 'name is required' }).max(255) }),
    handler: ({ input, principal, req }) =>
      adminChange(core, { principal, req }, 'key_create', `app_password:${input.name}`, async () => {
        const { entry, secret } = await service().create(principal.user, input.name);
        // The only time the secret is ever sent.
        return { ...entryJson(entry), password: secret };
      }),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/me/app_password/delete',
    output: z.null(),
    auth: 'user',
    input: z.object({ id: int() }),
    from: 'query',
    handler: async ({ input, principal }) => {
      await service().revoke(principal.user, input.id);
      return null;
    },
  });
}
