import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { PERM } from '../../auth/permissions.js';
import type { Core } from '../../core.js';
import { taskJson } from '../../tasks/manager.js';
import { joinBasePath } from '../../util/paths.js';
import { apiRoute } from '../route.js';
import { boolish } from '../validation.js';

const str = (field: string) => z.string({ error: `${field} is required` });
const names = z.array(z.string(), { error: 'names is required' });

/** `/api/fs/mkdir|rename|batch_rename|regex_rename|move|recursive_move|copy|remove|remove_empty_directory`. */
export function fsWriteRoutes(app: FastifyInstance, core: Core): void {
  const w = core.writer;

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/mkdir',
    auth: 'user',
    input: z.object({ path: str('path') }),
    handler: async ({ input, principal }) => {
      const p = joinBasePath(principal.user.basePath, input.path);
      core.access.requireWrite(principal.user, path.posix.dirname(p), p);
      await w.mkdir(p);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/rename',
    auth: 'user',
    input: z.object({ path: str('path'), name: str('name'), overwrite: boolish().optional() }),
    handler: async ({ input, principal }) => {
      const p = joinBasePath(principal.user.basePath, input.path);
      core.access.requireChange(principal.user, PERM.RENAME, p, path.posix.join(path.posix.dirname(p), input.name));
      await w.rename(p, input.name, input.overwrite ?? false);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/batch_rename',
    auth: 'user',
    input: z.object({ src_dir: str('src_dir'), rename_objects: z.array(z.object({ src_name: z.string().default(''), new_name: z.string().default('') })) }),
    handler: async ({ input, principal }) => {
      const dir = joinBasePath(principal.user.basePath, input.src_dir);
      core.access.requireChange(principal.user, PERM.RENAME, dir, ...input.rename_objects.flatMap((o) => [path.posix.join(dir, o.src_name), path.posix.join(dir, o.new_name)]));
      await w.batchRename(dir, input.rename_objects);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/regex_rename',
    auth: 'user',
    input: z.object({ src_dir: str('src_dir'), src_name_regex: str('src_name_regex').min(1, 'src_name_regex is required'), new_name_regex: str('new_name_regex') }),
    handler: async ({ input, principal }) => {
      const dir = joinBasePath(principal.user.basePath, input.src_dir);
      core.access.requireChange(principal.user, PERM.RENAME, dir);
      await w.regexRename(dir, input.src_name_regex, input.new_name_regex, (name) => !core.access.isHidden(principal.user, path.posix.join(dir, name)));
      return null;
    },
  });

  const batchInput = z.object({ src_dir: str('src_dir'), dst_dir: str('dst_dir'), names, overwrite: boolish().optional() });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/move',
    auth: 'user',
    input: batchInput,
    handler: async ({ input, principal }) => {
      const src = joinBasePath(principal.user.basePath, input.src_dir);
      const dst = joinBasePath(principal.user.basePath, input.dst_dir);
      core.access.requireChange(principal.user, PERM.MOVE, src, dst, ...input.names.map((n) => path.posix.join(src, n)));
      const tasks = await w.move(src, dst, input.names, { overwrite: input.overwrite, creator: principal.user });
      return tasks.length === 0 ? null : { tasks: tasks.map(taskJson) };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/recursive_move',
    auth: 'user',
    input: z.object({ src_dir: str('src_dir'), dst_dir: str('dst_dir') }),
    handler: async ({ input, principal, reply }) => {
      const src = joinBasePath(principal.user.basePath, input.src_dir);
      const dst = joinBasePath(principal.user.basePath, input.dst_dir);
      core.access.requireChange(principal.user, PERM.MOVE, src, dst);
      const { moved, tasks } = await w.recursiveMove(src, dst, principal.user);
      return reply.send({ code: 200, message: `Successfully moved ${moved} file(s)`, data: tasks.length === 0 ? null : { tasks: tasks.map(taskJson) } });
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/copy',
    auth: 'user',
    input: batchInput,
    handler: async ({ input, principal }) => {
      const src = joinBasePath(principal.user.basePath, input.src_dir);
      const dst = joinBasePath(principal.user.basePath, input.dst_dir);
      core.access.requireChange(principal.user, PERM.COPY, src, dst, ...input.names.map((n) => path.posix.join(src, n)));
      const tasks = await w.copy(src, dst, input.names, { overwrite: input.overwrite, creator: principal.user });
      return { tasks: tasks.map(taskJson) };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/remove',
    auth: 'user',
    input: z.object({ dir: str('dir'), names }),
    handler: async ({ input, principal }) => {
      const dir = joinBasePath(principal.user.basePath, input.dir);
      core.access.requireChange(principal.user, PERM.REMOVE, dir, ...input.names.map((n) => path.posix.join(dir, n)));
      await w.remove(dir, input.names);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/remove_empty_directory',
    auth: 'user',
    input: z.object({ src_dir: str('src_dir') }),
    handler: async ({ input, principal }) => {
      const dir = joinBasePath(principal.user.basePath, input.src_dir);
      core.access.requireChange(principal.user, PERM.REMOVE, dir);
      await w.removeEmptyDirs(dir);
      return null;
    },
  });
}

