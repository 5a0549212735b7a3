import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { Forbidden } from '../../errors.js';
import { apiRoute } from '../route.js';
import { int } from '../validation.js';

const MSG_DENIED = 'permission denied';

/**
 * `/api/fs/get_direct_upload_info`: OpenList hands the browser an upload URL of the storage
 * itself when the driver offers one. No driver here does, so after OpenList's checks (write
 * permission, a plain file name on the folder's own storage, `Overwrite: false` against an
 * existing file) the answer is OpenList's for such a driver: success with `data: null`.
 */
export function fsDirectUploadRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/get_direct_upload_info',
    output: z.null().describe('no driver offers a direct upload URL'),
    auth: 'user',
    input: z.object({ path: z.string().default('/'), file_name: z.string().default(''), file_size: int().default(0), tool: z.string().default('') }),
    handler: async ({ input, principal, req }) => {
      const view = core.views.for(principal.user, { front: 'api' });
      let dir: string;
      try {
        dir = decodeURIComponent(input.path);
      } catch {
        throw new Forbidden(MSG_DENIED);
      }
      if (input.file_name === '' || input.file_name.split(/[/\\]/).some((seg) => seg === '..')) throw new Forbidden('relative path is not allowed');
      const target = view.virtual(path.posix.join(dir, input.file_name));
      const parent = path.posix.dirname(target);
      view.requireCreate(target);
      await core.storages.ready();
      if (core.storages.resolve(parent)?.storage !== core.storages.resolve(target)?.storage) throw new Forbidden(MSG_DENIED);
      if (req.headers.overwrite === 'false' && (await view.find(target))) throw new Forbidden('file exists');
      return null;
    },
  });
}
