import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { Forbidden } from '../../errors.js';
import { apiRoute } from '../route.js';
import { int } from '../validation.js';
import { originOf } from '../../http/origin.js';

const MSG_DENIED = 'permission denied';

/** OpenList's HttpDirectUploadInfo, as its front end reads it (`src/pages/home/uploads/direct.ts`). */
const httpDirectShape = z.object({
  upload_url: z.string().describe('where the browser sends the file'),
  chunk_size: z.number().int().describe('0: the whole file in one request'),
  headers: z.record(z.string(), z.string()).optional().describe('headers to send with it'),
  method: z.string().optional().describe('PUT when absent'),
});

/**
 * `/api/fs/get_direct_upload_info`: an upload URL of the storage itself, for the browser to send
 * the file there without passing through this server (the S3 driver with `enable_direct_upload`:
 * a presigned PUT of that one object). After OpenList's checks (write permission, a plain file
 * name on the folder's own storage, `Overwrite: false` against an existing file), a storage that
 * offers no such upload answers success with `data: null` (the front end asks only where
 * fs/list named the tool in `direct_upload_tools`).
 */
export function fsDirectUploadRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/get_direct_upload_info',
    output: httpDirectShape.nullable().describe('null where the storage offers no direct upload'),
    auth: 'user',
    input: z.object({ path: z.string().default('/'), file_name: z.string().default(''), file_size: int().default(0), tool: z.string().default('') }),
    handler: async ({ input, principal, req }) => {
      const view = core.views.for(principal.user, { front: 'api', origin: originOf(req, 'api') });
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
      await core.storages.ready(parent, target);
      if (core.storages.resolve(parent)?.storage !== core.storages.resolve(target)?.storage) throw new Forbidden(MSG_DENIED);
      const overwrite = req.headers.overwrite !== 'false';
      if (!overwrite && (await view.find(target))) throw new Forbidden('file exists');
      const info = await view.directUpload(target, { tool: input.tool, size: input.file_size, overwrite });
      if (!info) return null;
      return { upload_url: info.url, chunk_size: info.chunkSize, ...(info.headers ? { headers: info.headers } : {}), method: info.method };
    },
  });
}
