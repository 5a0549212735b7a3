import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { BadRequest } from '../../errors.js';
import { adminChange } from '../admin-change.js';
import { apiRoute } from '../route.js';
import { sessionShape } from '../shapes.js';
import { int } from '../validation.js';

/** One session by id, or (`all`) every other session of the account. */
const evictBody = z.object({
  session_id: z.string().max(256).optional(),
  all: z.boolean().optional(),
});

const adminEvictBody = evictBody.extend({ user_id: int().optional() });

/**
 * What an account is signed in with, and ending it: `GET /api/me/sessions` and
 * `POST /api/me/sessions/evict` for one's own (AlistGo's routes), `GET /api/admin/session/list`
 * and `POST /api/admin/session/evict` for any user's (docs/access-and-security.md, sessions).
 */
export function sessionRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'GET',
    url: '/api/me/sessions',
    output: z.array(sessionShape),
    auth: 'user',
    handler: ({ principal }) => core.sessions.list(principal.user.id, principal.sessionId),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/me/sessions/evict',
    output: z.object({ ended: z.number().int() }),
    auth: 'user',
    input: evictBody,
    handler: ({ input, principal, req }) => {
      const me = principal.user;
      if (input.all) return adminChange(core, { principal, req }, 'session_end', `${me.username}:all`, async () => ({ ended: await core.sessions.endAll(me.id, principal.sessionId) }));
      const id = requireId(input.session_id);
      return adminChange(core, { principal, req }, 'session_end', `${me.username}:${id}`, async () => {
        await core.sessions.end(id, me.id);
        return { ended: 1 };
      });
    },
  });

  apiRoute(app, core, {
    method: 'GET',
    url: '/api/admin/session/list',
    output: z.array(sessionShape),
    auth: 'admin',
    input: z.object({ user_id: int().optional() }),
    from: 'query',
    handler: ({ input, principal }) => core.sessions.list(input.user_id, principal.sessionId),
  });

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/admin/session/evict',
    output: z.object({ ended: z.number().int() }),
    auth: 'admin',
    input: adminEvictBody,
    handler: ({ input, principal, req }) => {
      if (input.all) {
        if (input.user_id === undefined) throw new BadRequest('user_id is required with all');
        const userId = input.user_id;
        return adminChange(core, { principal, req }, 'session_end', `user:${userId}:all`, async () => ({ ended: await core.sessions.endAll(userId, principal.sessionId) }));
      }
      const id = requireId(input.session_id);
      return adminChange(core, { principal, req }, 'session_end', id, async () => {
        await core.sessions.end(id);
        return { ended: 1 };
      });
    },
  });
}

function requireId(id: string | undefined): string {
  if (!id) throw new BadRequest('session_id is required (or all: true)');
  return id;
}
