import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { taskJson } from '../../tasks/manager.js';
import { apiRoute } from '../route.js';
import { taskShape } from '../shapes.js';
import { boolish } from '../validation.js';

const str = (field: string) => z.string({ error: `${field} is required` });
const names = z.array(z.string(), { error: 'names is required' });
const password = z.string().default('');
/** Moves and copies between two protected folders: the destination's password, when it differs. */
const dst_password = z.string().default('');

/** `/api/fs/mkdir|rename|batch_rename|regex_rename|move|recursive_move|copy|remove|remove_empty_directory`. */
export function fsWriteRoutes(app: FastifyInstance, core: Core): void {
  // Writes inside a folder with a password need that password, as reading does: an optional
  // `password` field (clients of the original send none and act as without it).
  const viewOf = (user: Parameters<Core['views']['for']>[0], password: string, dstPassword = '') => core.views.for(user, { front: 'api', password: [password, dstPassword] });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/mkdir',
    output: z.null(),
    auth: 'user',
    input: z.object({ path: str('path'), password }),
    handler: async ({ input, principal }) => {
      const view = viewOf(principal.user, input.password);
      await view.mkdir(view.virtual(input.path));
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/rename',
    output: z.null(),
    auth: 'user',
    input: z.object({ path: str('path'), name: str('name'), overwrite: boolish().optional(), password }),
    handler: async ({ input, principal }) => {
      const view = viewOf(principal.user, input.password);
      await view.rename(view.virtual(input.path), input.name, input.overwrite ?? false);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/batch_rename',
    output: z.null(),
    auth: 'user',
    input: z.object({ src_dir: str('src_dir'), rename_objects: z.array(z.object({ src_name: z.string().default(''), new_name: z.string().default('') })), password }),
    handler: async ({ input, principal }) => {
      const view = viewOf(principal.user, input.password);
      await view.batchRename(view.virtual(input.src_dir), input.rename_objects);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/regex_rename',
    output: z.null(),
    auth: 'user',
    input: z.object({ src_dir: str('src_dir'), src_name_regex: str('src_name_regex').min(1, 'src_name_regex is required'), new_name_regex: str('new_name_regex'), password }),
    handler: async ({ input, principal }) => {
      const view = viewOf(principal.user, input.password);
      await view.regexRename(view.virtual(input.src_dir), input.src_name_regex, input.new_name_regex);
      return null;
    },
  });

  const batchInput = z.object({ src_dir: str('src_dir'), dst_dir: str('dst_dir'), names, overwrite: boolish().optional(), password, dst_password });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/move',
    output: z.object({ tasks: z.array(taskShape) }).nullable(),
    auth: 'user',
    input: batchInput,
    handler: async ({ input, principal }) => {
      const view = viewOf(principal.user, input.password, input.dst_password);
      const tasks = await view.move(view.virtual(input.src_dir), view.virtual(input.dst_dir), input.names, input.overwrite ?? false);
      return tasks.length === 0 ? null : { tasks: tasks.map(taskJson) };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/recursive_move',
    output: z.object({ tasks: z.array(taskShape) }).nullable(),
    auth: 'user',
    input: z.object({ src_dir: str('src_dir'), dst_dir: str('dst_dir'), password, dst_password }),
    handler: async ({ input, principal, reply }) => {
      const view = viewOf(principal.user, input.password, input.dst_password);
      const { moved, tasks } = await view.recursiveMove(view.virtual(input.src_dir), view.virtual(input.dst_dir));
      return reply.send({ code: 200, message: `Successfully moved ${moved} file(s)`, data: tasks.length === 0 ? null : { tasks: tasks.map(taskJson) } });
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/copy',
    output: z.object({ tasks: z.array(taskShape) }),
    auth: 'user',
    input: batchInput,
    handler: async ({ input, principal }) => {
      const view = viewOf(principal.user, input.password, input.dst_password);
      const tasks = await view.copy(view.virtual(input.src_dir), view.virtual(input.dst_dir), input.names, input.overwrite ?? false);
      return { tasks: tasks.map(taskJson) };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/remove',
    output: z.null(),
    auth: 'user',
    input: z.object({ dir: str('dir'), names, password }),
    handler: async ({ input, principal }) => {
      const view = viewOf(principal.user, input.password);
      await view.remove(view.virtual(input.dir), input.names);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/remove_empty_directory',
    output: z.null(),
    auth: 'user',
    input: z.object({ src_dir: str('src_dir'), password }),
    handler: async ({ input, principal }) => {
      const view = viewOf(principal.user, input.password);
      await view.removeEmptyDirs(view.virtual(input.src_dir));
      return null;
    },
  });
}

