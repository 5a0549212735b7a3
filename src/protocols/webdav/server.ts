import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { can, PERM } from '../../auth/permissions.js';
import type { Core } from '../../core.js';
import { originOf } from '../../http/origin.js';
import { authenticate } from './auth.js';
import { davGet, davOptions, davPut } from './content.js';
import { DavError, toDavError } from './errors.js';
import { davLock, davUnlock } from './locking.js';
import { davCopyMove, davDelete, davMkcol } from './namespace.js';
import { davPropfind, davProppatch } from './properties.js';
import { DeadProps, PropfindRenderers } from './props.js';
import { DAV_PREFIX, DavRequest, davPath, type DavState } from './request.js';

export { DAV_PREFIX, davPath } from './request.js';

const METHODS = ['OPTIONS', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'PROPFIND', 'PROPPATCH'] as const;
const CUSTOM = ['MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'PROPFIND', 'PROPPATCH'];
/**
 * Methods that change something need the WebDAV manage bit. LOCK and UNLOCK too (unlike the
 * original): a lock only serves a writer, and a read-only user's lock would block the writers.
 */
const MANAGE = new Set(['PUT', 'DELETE', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK']);

/**
 * WebDAV at `/dav` (wire-api.md §15.1): a thin adapter over the user's view (view/), so the same
 * permission bits and path rules as every other front hold; locks in the database (fs/locks.ts), dead properties in memory.
 */
export function webdavRoutes(app: FastifyInstance, core: Core): void {
  const state: DavState = { dead: new DeadProps(), renderers: new PropfindRenderers() };

  for (const m of CUSTOM) {
    try {
      app.addHttpMethod(m, { hasBody: true });
    } catch {
      // already known to the router
    }
  }

  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null));
    scope.setErrorHandler((err, req, reply) => {
      const { status, message, headers, condition } = toDavError(err);
      if (status >= 500) req.log.error({ err, method: req.method, url: req.url }, 'webdav request failed');
      if (reply.sent || reply.raw.headersSent) return;
      // An unread request body (a refused PUT) is drained so the connection stays usable.
      if (!req.raw.readableEnded) req.raw.resume();
      if (condition) {
        const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<D:error xmlns:D="DAV:"><D:${condition}/></D:error>`;
        void reply.code(status).headers(headers).type('application/xml; charset=utf-8').send(xml);
        return;
      }
      void reply.code(status).headers(headers).type('text/plain; charset=utf-8').send(message);
    });
    const handler = (req: FastifyRequest, reply: FastifyReply) => handle(core, state, req, reply);
    for (const url of [DAV_PREFIX, `${DAV_PREFIX}/`, `${DAV_PREFIX}/*`]) {
      scope.route({ method: [...METHODS], url, handler });
    }
    // Windows' WebDAV redirector asks the server's root whether it speaks DAV before it maps /dav.
    scope.options('/', (_req, reply) => reply.code(200).headers({ Allow: 'OPTIONS', DAV: '1, 2', 'MS-Author-Via': 'DAV', 'Content-Length': '0' }).send());
  });
}

async function handle(core: Core, state: DavState, req: FastifyRequest, reply: FastifyReply) {
  const caller = await authenticate(core, req);
  const method = req.method.toUpperCase();
  const { user } = caller;
  if (method !== 'OPTIONS') {
    if (user.disabled || !can(user, PERM.WEBDAV_READ)) throw new DavError(403, 'Forbidden');
    if (MANAGE.has(method) && !can(user, PERM.WEBDAV_MANAGE)) throw new DavError(403, 'Forbidden');
  }
  const view = core.views.for(user, { front: 'webdav', password: caller.password, origin: originOf(req, 'webdav') });
  const target = view.virtual(davPath(req.url) ?? '/');
  if (MANAGE.has(method)) view.requireChangeable(target);
  // The locks as they are now, on every process (one query in cluster mode); this front checks them itself.
  const ctx = new DavRequest(core, view, state, await core.locks.current(), req, reply, caller, target);
  switch (method) {
    case 'OPTIONS':
      return davOptions(ctx);
    case 'GET':
    case 'HEAD':
    case 'POST':
      return davGet(ctx, method === 'HEAD');
    case 'PUT':
      return davPut(ctx);
    case 'DELETE':
      return davDelete(ctx);
    case 'MKCOL':
      return davMkcol(ctx);
    case 'COPY':
    case 'MOVE':
      return davCopyMove(ctx, method === 'MOVE');
    case 'LOCK':
      return davLock(ctx);
    case 'UNLOCK':
      return davUnlock(ctx);
    case 'PROPFIND':
      return davPropfind(ctx);
    case 'PROPPATCH':
      return davProppatch(ctx);
    default:
      throw new DavError(405, 'Method Not Allowed');
  }
}
