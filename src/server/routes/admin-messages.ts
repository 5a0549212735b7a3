import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { apiRoute } from '../route.js';

/** The Messenger page (OpenList's `/api/admin/message/*`): see src/messenger/messenger.ts. */
export function adminMessageRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/message/get',
    output: z.object({ type: z.enum(['string', 'image']), content: z.string() }).describe('404 "no message" when no server part is waiting to send one'),
    auth: 'admin',
    handler: () => core.messenger.take(),
  });
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/message/send',
    output: z.null(),
    auth: 'admin',
    input: z.object({ message: z.string().default('') }),
    handler: ({ input }) => {
      core.messenger.deliver(input.message);
      return null;
    },
  });
}
