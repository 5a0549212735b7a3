import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Core } from '../../core.js';
import { mustProxy } from '../../drivers/form.js';
import type { Obj } from '../../drivers/types.js';
import type { ShareView } from '../../view/share.js';
import { objJson } from '../obj-json.js';
import { RawJson } from '../route.js';
import { apiUrl, encodePath } from '../urls.js';
import { proxy } from './raw.js';

/** The path prefix under which `/api/fs/list|get` browse a share (OpenList's FsListSplit). */
export const SHARE_PREFIX = '/@s';

export const isSharePath = (p: string): boolean => p === SHARE_PREFIX || p.startsWith(`${SHARE_PREFIX}/`);

/** `/@s/<sid>/<rest>` → the share id and the visitor's path below it (not yet cleaned). */
function splitSharePath(p: string): { sid: string; rest: string } {
  const after = p.slice(SHARE_PREFIX.length).replace(/^\/+/, '');
  const cut = after.indexOf('/');
  return cut === -1 ? { sid: after, rest: '/' } : { sid: after.slice(0, cut), rest: after.slice(cut) };
}

const never = () => false;

/** An entry as a visitor sees it: no sign, and no thumbnail link (it would name the creator's path). */
const visitorJson = (core: Core, obj: Obj) => ({ ...objJson(core, obj, '/', never), sign: '', thumb: '' });

export interface ShareReadInput {
  path: string;
  password: string;
  page?: number;
  per_page?: number;
  refresh?: boolean;
}

async function openShare(core: Core, req: FastifyRequest, input: ShareReadInput): Promise<{ view: ShareView; sid: string; rel: string }> {
  const { sid, rest } = splitSharePath(input.path);
  const view = await core.shares.open(sid, input.password, req.ip);
  return { view, sid, rel: view.clean(rest) };
}

/** `/api/fs/list` of a `/@s/…` path (OpenList's SharingList). */
export async function shareList(core: Core, req: FastifyRequest, input: ShareReadInput): Promise<RawJson> {
  const { view, rel } = await openShare(core, req, input);
  const { objs } = await view.list(rel, input.refresh ?? false);
  const total = objs.length;
  const page = input.page && input.page > 0 ? input.page : 1;
  const perPage = input.per_page && input.per_page > 0 ? input.per_page : 0;
  const slice = perPage > 0 ? objs.slice((page - 1) * perPage, page * perPage) : objs;
  const content = slice.length === 0 && total === 0 ? null : slice.map((o) => visitorJson(core, o));
  const { readme, header } = view.share;
  return new RawJson(JSON.stringify({ content, total, readme, header, write: false, provider: 'unknown' }));
}

/** `/api/fs/get` of a `/@s/…` path (OpenList's SharingGet): `raw_url` is the `/sd` link. */
export async function shareGet(core: Core, req: FastifyRequest, input: ShareReadInput) {
  const { view, sid, rel } = await openShare(core, req, input);
  const { obj } = await view.get(rel);
  let rawUrl = '';
  if (!obj.isDir) {
    rawUrl = `${apiUrl(req, core.config.site_url)}/sd/${encodeURIComponent(sid)}${rel === '/' ? '' : encodePath(rel)}`;
    if (view.share.pwd !== '') rawUrl += `?pwd=${encodeURIComponent(view.share.pwd)}`;
  }
  return {
    ...visitorJson(core, obj),
    type: core.fileTypes.ofName(obj.name),
    raw_url: rawUrl,
    readme: view.share.readme,
    header: view.share.header,
    provider: 'unknown',
    related: null,
  };
}

/**
 * `/sd/<sid>/<path>`: a shared file's bytes, with Range and HEAD (the raw links' sending code).
 * Every request opens the share anew: expiry, disabling, deletion and the limit hold at once.
 */
export function shareDownloadRoutes(app: FastifyInstance, core: Core): void {
  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const params = req.params as { sid: string; '*'?: string };
    const query = req.query as { pwd?: string; type?: string; d?: string };
    await core.storages.ready();
    const view = await core.shares.open(params.sid, typeof query.pwd === 'string' ? query.pwd : '', req.ip);
    const rel = view.clean(`/${params['*'] ?? ''}`, 'navigate');
    const { link, obj, storage } = await view.link(rel, { type: query.type, ip: req.ip, header: req.headers });
    // Deleting or disabling the share (here or on another process) cuts this download.
    const untrack = core.shares.streams.track(view.share.id, () => req.raw.destroy());
    reply.raw.once('close', untrack);
    if (!core.settings.getBool('share_force_proxy') && !mustProxy(storage.factory.config) && !storage.row.web_proxy && link.url && !link.file) {
      reply.header('Referrer-Policy', 'no-referrer');
      reply.header('Cache-Control', 'max-age=0, no-cache, no-store, must-revalidate');
      return reply.redirect(link.url, 302);
    }
    return proxy(core, req, reply, link, obj.name, obj.hash, storage);
  };
  app.route({ method: ['GET', 'HEAD'], url: '/sd/:sid', handler: handle });
  app.route({ method: ['GET', 'HEAD'], url: '/sd/:sid/*', handler: handle });
}
