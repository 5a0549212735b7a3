import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import type { TrashEntry } from '../../db/trash.js';
import { originOf } from '../../http/origin.js';
import type { View } from '../../view/view.js';
import { isoTime } from '../../fs/objects.js';
import { apiRoute } from '../route.js';
import { int } from '../validation.js';

const MAX_IDS = 1000;

/** A trash entry as `/api/fs/trash/list` answers it (the web UI's type of it: wire-types.ts). */
export const trashEntryShape = z.object({
  id: z.string(),
  name: z.string(),
  path: z.string().describe('where it was, as the caller sees paths'),
  size: z.number().int(),
  is_dir: z.boolean(),
  deleted_at: z.string().describe('ISO 8601'),
  deleted_by: z.string(),
  front: z.string().describe('the front it was deleted through (api, webdav, sftp, ftp, s3, …)'),
});

const ids = z.array(z.string().min(1).max(64)).min(1).max(MAX_IDS);

/** Where it was as the caller sees paths: below their root, or the whole path for an admin's entry outside it. */
const shownPath = (view: View, p: string) => (view.contains(p) ? view.client(p) : p);

function entryJson(view: View, e: TrashEntry) {
  return { id: e.id, name: e.name, path: shownPath(view, e.path), size: e.size, is_dir: e.isDir, deleted_at: isoTime(e.deletedAt), deleted_by: e.username, front: e.front };
}

/**
 * `/api/fs/trash/list|restore|purge`: each storage's trash (fs/trash.ts), through the caller's
 * view — a user sees, restores and purges what they deleted, an admin everything; a restore is
 * decided as a create of the name where it goes.
 */
export function fsTrashRoutes(app: FastifyInstance, core: Core): void {
  const viewOf = (req: Parameters<typeof originOf>[0], user: Parameters<Core['views']['for']>[0], password = '') => core.views.for(user, { front: 'api', origin: originOf(req, 'api'), password });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/trash/list',
    output: z.object({ content: z.array(trashEntryShape), total: z.number().int() }),
    auth: 'user',
    input: z.object({ path: z.string().default('/'), page: int().default(1), per_page: int().pipe(z.number().int().min(0).max(1000)).default(100), password: z.string().default('') }),
    handler: async ({ input, principal, req }) => {
      const view = viewOf(req, principal.user, input.password);
      const { entries, total } = await view.trashList(view.virtual(input.path), Math.max(1, input.page), input.per_page);
      return { content: entries.map((e) => entryJson(view, e)), total };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/trash/restore',
    output: z.object({ restored: z.number().int() }),
    auth: 'user',
    input: z.object({
      ids,
      dst_dir: z.string().optional().describe('restore into this folder of the same storage (default: where each was)'),
      conflict_policy: z.enum(['cancel', 'overwrite', 'skip']).default('cancel'),
      password: z.string().default(''),
    }),
    handler: async ({ input, principal, req }) => {
      const view = viewOf(req, principal.user, input.password);
      const restored = await view.trashRestore(input.ids, input.dst_dir === undefined ? undefined : view.virtual(input.dst_dir), input.conflict_policy);
      return { restored };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/trash/purge',
    output: z.null(),
    auth: 'user',
    input: z.object({ ids }),
    handler: async ({ input, principal, req }) => {
      await viewOf(req, principal.user).trashPurge(input.ids);
      return null;
    },
  });
}
