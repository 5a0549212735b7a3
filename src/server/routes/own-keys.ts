// What the routes of a user's own keys share (S3 access keys, SSH keys): the title a key is given
// and the deletion of one of one's own keys.

import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ownAccount } from '../../auth/permissions.js';
import type { Core } from '../../core.js';
import { NotFound } from '../../errors.js';
import { apiRoute } from '../route.js';
import { int } from '../validation.js';
import { adminChange } from '../admin-change.js';

/** A key's title, as the user gives it when adding a key. */
export const keyTitle = () => z.string({ error: 'title is required' }).trim().min(1, 'title is required').max(255);

/** The keys of a table, by id, each belonging to one user. */
interface OwnedKeys {
  byId(id: number): Promise<{ id: number; userId: number } | undefined>;
  delete(id: number): Promise<void>;
}

/** POST `url`?id=: deletes one of the caller's own keys. */
export function deleteOwnKeyRoute(app: FastifyInstance, core: Core, url: string, repo: () => OwnedKeys): void {
  apiRoute(app, core, {
    method: 'POST',
    url,
    output: z.null(),
    auth: 'user',
    input: z.object({ id: int() }),
    from: 'query',
    handler: (ctx) =>
      adminChange(core, ctx, 'key_delete', `${url}?id=${ctx.input.id}`, async () => {
        const user = ownAccount(ctx.principal.user);
        const key = await repo().byId(ctx.input.id);
        // Another user's key is answered like a missing one.
        if (!key || key.userId !== user.id) throw new NotFound('key not found');
        await repo().delete(key.id);
        return null;
      }),
  });
}
