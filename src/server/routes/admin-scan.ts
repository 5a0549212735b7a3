import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { apiRoute } from '../route.js';

/** `/api/admin/scan/*`: OpenList's manual scan, on its Indexes page (fs/scan.ts). */
export function adminScanRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/scan/start',
    output: z.null(),
    auth: 'admin',
    input: z.object({ path: z.string().default('/'), limit: z.coerce.number().min(0, 'limit must not be negative').default(0) }),
    handler: ({ input }) => {
      core.scan.start(input.path, input.limit);
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/scan/stop',
    output: z.null(),
    auth: 'admin',
    handler: () => {
      core.scan.stop();
      return null;
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/scan/progress',
    output: z.object({ obj_count: z.number().int(), is_done: z.boolean() }),
    auth: 'admin',
    handler: () => core.scan.progress(),
  });
}
