import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { CONFLICT_POLICIES } from '../../view/conflicts.js';
import type { Core } from '../../core.js';
import { taskJson } from '../../tasks/manager.js';
import { apiRoute } from '../route.js';
import { taskShape } from '../shapes.js';
import { boolish } from '../validation.js';
import { originOf } from '../../http/origin.js';
import { fsTrashRoutes } from './fs-trash.js';

const str = (field: string) => z.string({ error: `${field} is required` });
const names = z.array(z.string(), { error: 'names is required' });
const password = z.string().default('');
/** Moves and copies between two protected folders: the destination's password, when it differs. */
const dst_password = z.string().default('');

type ViewOf = (req: FastifyRequest, user: Parameters<Core['views']['for']>[0], password: string, dstPassword?: string) => ReturnType<Core['views']['for']>;

/** `/api/fs/mkdir|rename|batch_rename|regex_rename|move|recursive_move|copy|remove|remove_empty_directory`. */
export function fsWriteRoutes(app: FastifyInstance, core: Core): void {
  fsTrashRoutes(app, core);
  // Writes inside a folder with a password need that password, as reading does: an optional
  // `password` field (clients of the original send none and act as without it).
  const viewOf: ViewOf = (req, user, password, dstPassword = '') => core.views.for(user, { front: 'api', origin: originOf(req, 'api'), password: [password, dstPassword] });
  folderRoutes(app, core, viewOf);
  renameRoutes(app, core, viewOf);
  transferRoutes(app, core, viewOf);
}

/** `/api/fs/mkdir|remove|remove_empty_directory`: folders made and entries removed. */
function folderRoutes(app: FastifyInstance, core: Core, viewOf: ViewOf): void {
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/mkdir',
    output: z.null(),
    auth: 'user',
    input: z.object({ path: str('path'), password }),
    handler: async ({ input, principal, req }) => {
      const view = viewOf(req, principal.user, input.password);
      await view.mkdir(view.virtual(input.path));
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/remove',
    output: z.null(),
    auth: 'user',
    input: z.object({ dir: str('dir'), names, password, permanent: boolish().default(false).describe("past the storage's trash (admins only)") }),
    handler: async ({ input, principal, req }) => {
      const view = viewOf(req, principal.user, input.password);
      await view.remove(view.virtual(input.dir), input.names, { permanent: input.permanent });
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/remove_empty_directory',
    output: z.null(),
    auth: 'user',
    input: z.object({ src_dir: str('src_dir'), password }),
    handler: async ({ input, principal, req }) => {
      const view = viewOf(req, principal.user, input.password);
      await view.removeEmptyDirs(view.virtual(input.src_dir));
      return null;
    },
  });
}

/** `/api/fs/rename|batch_rename|regex_rename`. */
function renameRoutes(app: FastifyInstance, core: Core, viewOf: ViewOf): void {
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/rename',
    output: z.null(),
    auth: 'user',
    input: z.object({ path: str('path'), name: str('name'), overwrite: boolish().optional(), password }),
    handler: async ({ input, principal, req }) => {
      const view = viewOf(req, principal.user, input.password);
      await view.rename(view.virtual(input.path), input.name, input.overwrite ?? false);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/batch_rename',
    output: z.null(),
    auth: 'user',
    input: z.object({
      src_dir: str('src_dir'),
      rename_objects: z.array(z.object({ src_name: z.string().default(''), new_name: z.string().default('') })).max(10_000).default([]),
      // the single-pair form: one rename given beside (or instead of) the list
      src_name: z.string().default(''),
      new_name: z.string().default(''),
      password,
    }),
    handler: async ({ input, principal, req }) => {
      const view = viewOf(req, principal.user, input.password);
      const pairs = input.src_name || input.new_name ? [...input.rename_objects, { src_name: input.src_name, new_name: input.new_name }] : input.rename_objects;
      await view.batchRename(view.virtual(input.src_dir), pairs);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/regex_rename',
    output: z.null(),
    auth: 'user',
    input: z.object({ src_dir: str('src_dir'), src_name_regex: str('src_name_regex').min(1, 'src_name_regex is required'), new_name_regex: str('new_name_regex'), password }),
    handler: async ({ input, principal, req }) => {
      const view = viewOf(req, principal.user, input.password);
      await view.regexRename(view.virtual(input.src_dir), input.src_name_regex, input.new_name_regex);
      return null;
    },
  });
}

/** `/api/fs/move|recursive_move|copy`: entries moved or copied to another folder. */
function transferRoutes(app: FastifyInstance, core: Core, viewOf: ViewOf): void {
  // skip_existing and merge: the OpenList 4.2.6 dialog's choices (merge on copy only).
  const batchInput = z.object({
    src_dir: str('src_dir'),
    dst_dir: str('dst_dir'),
    names,
    overwrite: boolish().optional(),
    skip_existing: boolish().optional(),
    merge: boolish().optional(),
    password,
    dst_password,
  });
  const conflictOf = (input: z.infer<typeof batchInput>, merge: boolean) => ({ overwrite: input.overwrite ?? false, skipExisting: input.skip_existing ?? false, merge: merge && (input.merge ?? false) });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/move',
    output: z.object({ tasks: z.array(taskShape) }).nullable(),
    auth: 'user',
    input: batchInput,
    handler: async ({ input, principal, req }) => {
      const view = viewOf(req, principal.user, input.password, input.dst_password);
      const tasks = await view.move(view.virtual(input.src_dir), view.virtual(input.dst_dir), input.names, conflictOf(input, false));
      return tasks.length === 0 ? null : { tasks: tasks.map(taskJson) };
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/recursive_move',
    output: z.object({ tasks: z.array(taskShape) }).nullable(),
    auth: 'user',
    input: z.object({ src_dir: str('src_dir'), dst_dir: str('dst_dir'), conflict_policy: z.enum(CONFLICT_POLICIES).default('cancel'), password, dst_password }),
    handler: async ({ input, principal, req, reply }) => {
      const view = viewOf(req, principal.user, input.password, input.dst_password);
      const { moved, tasks } = await view.recursiveMove(view.virtual(input.src_dir), view.virtual(input.dst_dir), input.conflict_policy);
      return reply.send({ code: 200, message: `Successfully moved ${moved} file(s)`, data: tasks.length === 0 ? null : { tasks: tasks.map(taskJson) } });
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/copy',
    output: z.object({ tasks: z.array(taskShape) }),
    auth: 'user',
    input: batchInput,
    handler: async ({ input, principal, req }) => {
      const view = viewOf(req, principal.user, input.password, input.dst_password);
      const tasks = await view.copy(view.virtual(input.src_dir), view.virtual(input.dst_dir), input.names, conflictOf(input, true));
      return { tasks: tasks.map(taskJson) };
    },
  });
}
