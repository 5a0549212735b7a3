import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cleanInner } from '../../archive/entries.js';
import type { Core } from '../../core.js';
import type { Obj } from '../../drivers/types.js';
import type { ShareView } from '../../view/share.js';
import { archiveMetaJson, innerPage, objJson } from '../obj-json.js';
import { PrivacyMask } from '../envelope.js';
import { envelopeCode, envelopeStatus, sendRawError } from '../raw-error.js';
import { sendArchiveEntry } from '../../http/send-file.js';
import { RawJson } from '../route.js';
import { encodePath } from '../../util/encode-path.js';
import { apiUrl } from '../../http/urls.js';
import { pageBounds } from '../validation.js';
import { downloadPlan, redirectOf } from '../../http/download-policy.js';
import { proxy } from '../../http/proxy.js';

/** The path prefix under which `/api/fs/list|get` browse a share (OpenList's FsListSplit). */
export const SHARE_PREFIX = '/@s';

export const isSharePath = (p: string): boolean => p === SHARE_PREFIX || p.startsWith(`${SHARE_PREFIX}/`);

/** `/@s/<sid>/<rest>` → the share id and the visitor's path below it (not yet cleaned). */
export function splitSharePath(p: string): { sid: string; rest: string } {
  const after = p.slice(SHARE_PREFIX.length).replace(/^\/+/, '');
  const cut = after.indexOf('/');
  return cut === -1 ? { sid: after, rest: '/' } : { sid: after.slice(0, cut), rest: after.slice(cut) };
}

const never = () => false;

/**
 * An entry as a visitor sees it: no sign, and a thumbnail link of the share's own (`/sd/<sid>/<path>?type=thumb`,
 * decided by the share's view when asked), never the creator's path. `thumbLink`: the entry's visitor link, when it may have one.
 */
function visitorJson(core: Core, obj: Obj, thumbLink?: (obj: Obj) => string) {
  const base = objJson(core, obj, '/', never);
  const thumb = obj.thumb ?? (thumbLink && !obj.isDir ? thumbLink(obj) : '');
  return { ...base, sign: '', thumb };
}

/** A visitor's thumbnail link of a listed entry (`/sd/…?type=thumb`, with the codes the listing was given), or ''. */
async function visitorThumb(core: Core, req: FastifyRequest, sid: string, dir: string, view: ShareView, input: ShareReadInput) {
  const placeOf = await view.placesIn(dir);
  return (obj: Obj): string => {
    const rel = dir === '/' ? `/${obj.name}` : `${dir}/${obj.name}`;
    const place = placeOf(obj.name);
    if (place === undefined || (!obj.selfThumb && !core.thumbs.offer(place, obj))) return '';
    const link = visitorLink(core, req, 'sd', sid, rel, view, input);
    return `${link}${link.includes('?') ? '&' : '?'}type=thumb`;
  };
}

export interface ShareReadInput {
  path: string;
  /** The share code (OpenList); with a share without code, a folder password. */
  password: string;
  /** Atrium's: the password of a protected folder inside the share. */
  folder_password?: string;
  page?: number;
  per_page?: number;
  refresh?: boolean;
}

async function openShare(core: Core, req: FastifyRequest, input: ShareReadInput): Promise<{ view: ShareView; sid: string; rel: string }> {
  const { sid, rest } = splitSharePath(input.path);
  const view = await core.shares.open(sid, { code: input.password, folderPasswords: [input.password, input.folder_password ?? ''] }, req.ip, String(req.id));
  return { view, sid, rel: view.clean(rest) };
}

/** The query of a visitor link (`/sd`, `/sad`): the share code, and the folder password the visitor gave. */
function linkQuery(view: ShareView, folderPassword: string): string {
  const q = new URLSearchParams();
  if (view.share.pwd !== '') q.set('pwd', view.share.pwd);
  if (folderPassword !== '' && folderPassword !== view.share.pwd) q.set('folder_pwd', folderPassword);
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

/** The visitor's link of a path of the share under a raw prefix (`sd`, `sad`). */
function visitorLink(core: Core, req: FastifyRequest, prefix: string, sid: string, rel: string, view: ShareView, input: ShareReadInput): string {
  const given = input.folder_password || (view.share.pwd === '' ? input.password : '');
  return `${apiUrl(req, core.config.site_url)}/${prefix}/${encodeURIComponent(sid)}${rel === '/' ? '' : encodePath(rel)}${linkQuery(view, given)}`;
}

/** `/api/fs/list` of a `/@s/…` path (OpenList's SharingList). */
export async function shareList(core: Core, req: FastifyRequest, input: ShareReadInput): Promise<RawJson> {
  const { view, sid, rel } = await openShare(core, req, input);
  const { objs } = await view.list(rel, input.refresh ?? false);
  const total = objs.length;
  const { start, end } = pageBounds(input, total);
  const slice = objs.slice(start, end);
  const thumbOf = await visitorThumb(core, req, sid, rel, view, input);
  const content = slice.length === 0 && total === 0 ? null : slice.map((o) => visitorJson(core, o, thumbOf));
  const { readme, header } = view.share;
  return new RawJson(JSON.stringify({ content, total, readme, header, write: false, provider: 'unknown' }));
}

/** `/api/fs/get` of a `/@s/…` path (OpenList's SharingGet): `raw_url` is the `/sd` link. */
export async function shareGet(core: Core, req: FastifyRequest, input: ShareReadInput) {
  const { view, sid, rel } = await openShare(core, req, input);
  const { obj } = await view.get(rel);
  const rawUrl = obj.isDir ? '' : visitorLink(core, req, 'sd', sid, rel, view, input);
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

export interface ShareArchiveInput extends ShareReadInput {
  archive_pass: string;
  inner_path?: string;
}

/** `/api/fs/archive/meta` of a `/@s/…` path (OpenList's SharingArchiveMeta): `raw_url` is the `/sad` link. */
export async function shareArchiveMeta(core: Core, req: FastifyRequest, input: ShareArchiveInput) {
  const { view, sid, rel } = await openShare(core, req, input);
  const meta = await view.archiveMeta(rel, { password: input.archive_pass, refresh: input.refresh ?? false });
  return new RawJson(archiveMetaJson(core, meta, { raw_url: visitorLink(core, req, 'sad', sid, rel, view, input), sign: '' }));
}

/** `/api/fs/archive/list` of a `/@s/…` path (OpenList's SharingArchiveList). */
export async function shareArchiveList(core: Core, req: FastifyRequest, input: ShareArchiveInput) {
  const { view, rel } = await openShare(core, req, input);
  const folder = await view.archiveList(rel, cleanInner(input.inner_path), { password: input.archive_pass, refresh: input.refresh ?? false });
  return innerPage(core, folder, (total) => pageBounds(input, total));
}

interface LinkQuery {
  size?: string;
  pwd?: string;
  folder_pwd?: string;
  type?: string;
  inner?: string;
  pass?: string;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** Opens the share of a visitor link and cleans its path (every request anew). */
async function openLink(core: Core, req: FastifyRequest): Promise<{ view: ShareView; rel: string; query: LinkQuery }> {
  const params = req.params as { sid: string; '*'?: string };
  const query = req.query as LinkQuery;
  const code = str(query.pwd);
  const view = await core.shares.open(params.sid, { code, folderPasswords: [code, str(query.folder_pwd)] }, req.ip, String(req.id));
  return { view, rel: view.clean(`/${params['*'] ?? ''}`, 'navigate'), query };
}

/**
 * `/sd/<sid>/<path>`: a shared file's bytes, with Range and HEAD (the raw links' sending code),
 * and `/sad/<sid>/<path>?inner=`: one entry of a shared archive. Every request opens the share
 * anew: expiry, disabling, deletion and the limit hold at once.
 */
export function shareDownloadRoutes(app: FastifyInstance, core: Core): void {
  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const { view, rel, query } = await openLink(core, req);
    if (query.type === 'thumb') {
      // The share's view decides (hidden, protected folder) before the thumbnail service reads anything.
      const { link, obj, storage } = await view.thumb(rel, str(query.size) || undefined);
      return proxy(core, req, reply, link, obj.name, undefined, storage);
    }
    const got = await view.download(rel, { type: str(query.type) || undefined, ip: req.ip, header: req.headers });
    // Deleting or disabling the share (here or on another process) cuts this download.
    const untrack = core.shares.streams.track(view.share.id, () => req.raw.destroy());
    reply.raw.once('close', untrack);
    const to = redirectOf(downloadPlan('share', got.storage, rel, core.settings), got.link);
    if (to) {
      reply.header('Referrer-Policy', 'no-referrer');
      reply.header('Cache-Control', 'max-age=0, no-cache, no-store, must-revalidate');
      got.sent(0);
      return reply.redirect(to, 302);
    }
    return proxy(core, req, reply, got.link, got.obj.name, got.obj.hash, got.storage, undefined, got);
  };

  /** `/sad/<sid>/<path>?inner=&pass=`: one entry of a shared archive (OpenList's SharingArchiveExtract). */
  const entry = async (req: FastifyRequest, reply: FastifyReply) => {
    const { view, rel, query } = await openLink(core, req);
    const inner = cleanInner(str(query.inner));
    const controller = new AbortController();
    req.raw.once('close', () => controller.abort());
    const { stream, entry: e } = await view.archiveEntry(rel, inner, str(query.pass), controller.signal);
    const untrack = core.shares.streams.track(view.share.id, () => req.raw.destroy());
    reply.raw.once('close', untrack);
    await sendArchiveEntry(req, reply, stream, e, path.posix.basename(inner));
  };
  // Failures answer a real status and OpenList's error page (JSON for an Accept asking it).
  const mask = new PrivacyMask(core.settings);
  for (const [prefix, serve] of [['sd', handle], ['sad', entry]] as const) {
    const handler = async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        return await serve(req, reply);
      } catch (err) {
        return sendRawError(err, req, reply, mask, envelopeStatus, envelopeCode);
      }
    };
    app.route({ method: ['GET', 'HEAD'], url: `/${prefix}/:sid`, handler });
    app.route({ method: ['GET', 'HEAD'], url: `/${prefix}/:sid/*`, handler });
  }
}
