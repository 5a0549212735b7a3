import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { type ErrorKind, isExpected } from '../../errors.js';
import { originOf } from '../../http/origin.js';
import { apiUrl } from '../../http/urls.js';
import { type Callback, type WopiHost, WopiRefusal } from '../../wopi/host.js';
import { apiRoute, authenticate } from '../route.js';
import { isSharePath, splitSharePath } from './share-visit.js';
import type { RouteDoc } from '../route-table.js';
import { boolish } from '../validation.js';

/** WOPI's answer to each error kind (Microsoft's WOPI REST status codes): a refused change is 401, a refused read 404. */
const WOPI_STATUS: Record<ErrorKind, number> = {
  BadRequest: 400,
  Unauthorized: 401,
  OtpRequired: 401,
  Forbidden: 401,
  PasswordRequired: 401,
  Hidden: 404,
  NotFound: 404,
  Exists: 409,
  NotEmpty: 409,
  Conflict: 409,
  Integrity: 400,
  Unsupported: 501,
  TooLarge: 413,
  QuotaExceeded: 413,
  PathTooLong: 400,
  TooManyRequests: 503,
  Upstream: 500,
  Unavailable: 503,
  Internal: 500,
};

/** What `/api/wopi/create-session` answers (the web UI's type of it: wire-types.ts). */
export const wopiSessionShape = z.object({
  action_url: z.string(),
  editor_url: z.string(),
  wopi_src: z.string(),
  access_token: z.string(),
  access_token_ttl: z.number(),
  mode: z.enum(['view', 'edit']),
  service_name: z.string(),
  action: z.string(),
  favicon_url: z.string(),
  session: z.object({ id: z.string(), access_token: z.string(), expires: z.number() }),
  wopi_src_url: z.string(),
});

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The request's body as a stream of the declared length (-1: chunked). */
function bodyOf(req: FastifyRequest): { stream: Readable; size: number } {
  const declared = header(req, 'content-length');
  const size = declared === undefined ? -1 : Number(declared);
  return { stream: req.raw, size: Number.isSafeInteger(size) && size >= 0 ? size : -1 };
}

/** The preferred language of the request (Accept-Language's first tag), for the action URL's UI_LLCC. */
const langOf = (req: FastifyRequest) => header(req, 'accept-language')?.split(',')[0]?.split(';')[0]?.trim() || 'en-US';

const callbackDoc = (summary: string, extra: Partial<RouteDoc> = {}): RouteDoc => ({
  auth: 'none',
  summary: `WOPI ${summary} (the online office's callback; access_token in the query)`,
  rawResponse: { description: 'WOPI REST: a status code with X-WOPI-* headers (401 token, 404 file, 409 lock with X-WOPI-Lock, 413 size, 501 unsupported), JSON or bytes as the operation gives; not the JSON envelope' },
  ...extra,
});

const OVERRIDES = 'LOCK (with X-WOPI-OldLock: UNLOCK_AND_RELOCK), GET_LOCK, REFRESH_LOCK, UNLOCK, PUT_RELATIVE, RENAME_FILE';

/**
 * The WOPI host (docs/office-and-thumbnails.md): `POST /api/wopi/create-session` for a signed-in
 * user (the envelope), and the online office's callbacks under `/api/wopi/files/:id`, which
 * speak plain WOPI (status codes and X-WOPI-* headers, bodies left unparsed).
 */
export async function wopiRoutes(app: FastifyInstance, core: Core): Promise<void> {
  const host = core.wopi;

  apiRoute(app, core, {
    method: 'POST',
    url: '/api/wopi/create-session',
    // A share's visitor (`/@s/<id>/…`, with the share code as `password`) needs no account; every other path is a user's.
    auth: 'none',
    input: z.object({
      path: z.string().min(1, 'path is required'),
      edit: boolish().default(false),
      service: z.string().default(''),
      lang: z.string().max(35).default(''),
      password: z.string().default(''),
      folder_password: z.string().default(''),
    }),
    output: wopiSessionShape,
    handler: async ({ input, req }) => {
      const site = apiUrl(req, core.config.site_url);
      const lang = input.lang || langOf(req);
      if (isSharePath(input.path)) {
        const { sid, rest } = splitSharePath(input.path);
        const visit = await core.shares.open(sid, { code: input.password, folderPasswords: [input.password, input.folder_password] }, req.ip, String(req.id));
        return host.createShareSession(visit, rest, { service: input.service, lang }, site);
      }
      const principal = (await authenticate(core, req, 'user'))!;
      const view = core.views.for(principal.user, { front: 'api', origin: originOf(req, 'wopi'), password: input.password });
      return host.createSession(view, { path: input.path, edit: input.edit, service: input.service, lang }, site);
    },
  });

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null));
    scope.setErrorHandler((err, req, reply) => {
      req.raw.resume();
      if (err instanceof WopiRefusal) return reply.code(err.status).headers(err.headers).send();
      const status = isExpected(err) ? WOPI_STATUS[err.kind] : 500;
      if (status === 500) req.log.error({ err, url: req.url.replace(/access_token=[^&]*/, 'access_token=…') }, 'WOPI request failed');
      return reply
        .code(status)
        .header('X-WOPI-ServerError', isExpected(err) ? err.message : 'internal error')
        .send();
    });

    const open = (req: FastifyRequest): Promise<Callback> => {
      const { id } = req.params as { id: string };
      const { access_token: token } = req.query as { access_token?: string };
      return host.open(id, token, originOf(req, 'wopi'), apiUrl(req, core.config.site_url));
    };

    scope.get('/api/wopi/files/:id', { config: { doc: callbackDoc('CheckFileInfo: the file, the user and what they may do now, as JSON') } }, async (req, reply) => {
      const info = await host.checkFileInfo(await open(req));
      return reply.type('application/json; charset=utf-8').send(JSON.stringify(info));
    });

    scope.get('/api/wopi/files/:id/contents', { config: { doc: callbackDoc('GetFile: the bytes, with X-WOPI-ItemVersion', { headers: { 'X-WOPI-MaxExpectedSize': 'answer 412 when the file is larger' } }) } }, async (req, reply) => {
      const max = Number(header(req, 'x-wopi-maxexpectedsize'));
      const file = await host.getFile(await open(req), Number.isFinite(max) && header(req, 'x-wopi-maxexpectedsize') ? max : undefined);
      return reply.type('application/octet-stream').header('Content-Length', String(file.size)).header('X-WOPI-ItemVersion', file.version).send(file.stream);
    });

    scope.post(
      '/api/wopi/files/:id/contents',
      { config: { doc: callbackDoc('PutFile: the body replaces the file (the WOPI lock\'s holder, or an empty unlocked file)', { body: 'binary', headers: { 'X-WOPI-Override': '"PUT"', 'X-WOPI-Lock': 'the lock id' } }) } },
      async (req, reply) => {
        const override = header(req, 'x-wopi-override');
        const cb = await open(req);
        if (override !== undefined && override !== 'PUT') host.unsupported(override);
        const saved = await host.putFile(cb, header(req, 'x-wopi-lock'), bodyOf(req));
        // Collabora reads the new modification time from the answer's JSON.
        return reply.code(200).header('X-WOPI-ItemVersion', saved.version).type('application/json; charset=utf-8').send(JSON.stringify({ LastModifiedTime: saved.modified }));
      },
    );

    scope.post(
      '/api/wopi/files/:id',
      {
        config: {
          doc: callbackDoc(`file operations by X-WOPI-Override: ${OVERRIDES}`, {
            body: 'binary',
            headers: {
              'X-WOPI-Override': OVERRIDES,
              'X-WOPI-Lock': 'the lock id',
              'X-WOPI-OldLock': 'the lock id replaced (UNLOCK_AND_RELOCK)',
              'X-WOPI-SuggestedTarget': 'PUT_RELATIVE: an extension or a name, UTF-7; the host picks a free name',
              'X-WOPI-RelativeTarget': 'PUT_RELATIVE: the exact name, UTF-7',
              'X-WOPI-OverwriteRelativeTarget': 'PUT_RELATIVE: "true" replaces an unlocked file of that name',
              'X-WOPI-RequestedName': 'RENAME_FILE: the new name without extension, UTF-7',
            },
          }),
        },
      },
      (req, reply) => fileOperation(host, req, reply, open),
    );
  });
}

async function fileOperation(host: WopiHost, req: FastifyRequest, reply: FastifyReply, open: (req: FastifyRequest) => Promise<Callback>) {
  const cb = await open(req);
  const override = header(req, 'x-wopi-override') ?? '';
  const lock = header(req, 'x-wopi-lock');
  const json = (body: unknown) => reply.type('application/json; charset=utf-8').send(JSON.stringify(body));
  switch (override) {
    case 'LOCK': {
      const old = header(req, 'x-wopi-oldlock');
      await host.lock(cb, lock, old);
      return reply.code(200).send();
    }
    case 'GET_LOCK':
      return reply.code(200).header('X-WOPI-Lock', await host.getLock(cb)).send();
    case 'REFRESH_LOCK':
      await host.refreshLock(cb, lock);
      return reply.code(200).send();
    case 'UNLOCK':
      await host.unlock(cb, lock);
      return reply.code(200).send();
    case 'PUT_RELATIVE': {
      const answer = await host.putRelative(
        cb,
        { suggested: header(req, 'x-wopi-suggestedtarget'), relative: header(req, 'x-wopi-relativetarget'), overwrite: header(req, 'x-wopi-overwriterelativetarget')?.toLowerCase() === 'true' },
        bodyOf(req),
      );
      return json(answer);
    }
    case 'RENAME_FILE':
      return json(await host.renameFile(cb, lock, header(req, 'x-wopi-requestedname')));
    default:
      return host.unsupported(override);
  }
}
