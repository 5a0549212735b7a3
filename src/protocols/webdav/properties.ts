// PROPFIND (Depth 0, 1 or infinity, bounded) and PROPPATCH (dead properties in memory).
import type { Obj } from '../../drivers/types.js';
import { DavError } from './errors.js';
import { LIVE_PROPS, multistatus, multistatusBuffer, type PropRequest } from './props.js';
import { collectionQuota, type DavQuota } from './quota.js';
import { type DavRequest, readBody } from './request.js';
import { child, DAV, is, parseXml, propKey, serialize, type XmlElement } from './xml.js';

/** Entries one `Depth: infinity` PROPFIND may describe before the server refuses it. */
const MAX_INFINITE_ENTRIES = 100_000;

/**
 * RFC 4331's figures for the collection: the quota of the user or group whose root holds it
 * (available: what is left of it), else the storage's own space.
 */
async function davQuota(ctx: DavRequest): Promise<DavQuota | undefined> {
  const q = await ctx.view.quotaAt(ctx.target);
  if (q) return { available: Math.max(0, q.quota - q.used), used: q.used };
  return collectionQuota(ctx.core.storages, ctx.target, (p) => ctx.view.mayRead(p));
}

export async function davPropfind(ctx: DavRequest) {
  const body = await readBody(ctx.req);
  const request = parsePropfind(parseXml(body));
  const depthHeader = String(ctx.req.headers.depth ?? 'infinity').toLowerCase();
  if (!['0', '1', 'infinity'].includes(depthHeader)) throw new DavError(400, 'Depth must be 0, 1 or infinity');
  const root = await ctx.mustStat(ctx.target);
  const renderer = ctx.renderers.for(request);
  const out: Buffer[] = [];
  // Without locks and dead properties anywhere, listed entries need no per-path lookups.
  const plain = ctx.locks.isEmpty() && ctx.dead.isEmpty();
  const describe = (p: string, obj: Obj, href: string) => out.push(renderer.render({ obj, href, locks: ctx.locks.covering(p), dead: ctx.dead.of(p) }));
  // RFC 4331 (rclone about, desktop clients' free space): for the collection asked about.
  const quota = renderer.wantsQuota && root.isDir ? await davQuota(ctx) : undefined;
  const top = root.name === 'root' && ctx.target === '/' ? { ...root, name: '' } : root;
  out.push(renderer.render({ obj: top, href: ctx.href(ctx.target, root.isDir), locks: ctx.locks.covering(ctx.target), dead: ctx.dead.of(ctx.target), quota }));
  if (root.isDir && depthHeader !== '0') {
    const walk = async (dir: string, deep: boolean) => {
      const { objs } = await ctx.view.list(dir);
      const dirHref = ctx.href(dir, true);
      for (const obj of objs) {
        if (out.length >= MAX_INFINITE_ENTRIES) {
          throw new DavError(403, 'too many entries for Depth: infinity', {}, 'propfind-finite-depth');
        }
        if (plain && !(deep && obj.isDir)) {
          out.push(renderer.renderChild(obj, dirHref));
          continue;
        }
        const p = dir === '/' ? `/${obj.name}` : `${dir}/${obj.name}`;
        describe(p, obj, `${dirHref}${encodeURIComponent(obj.name)}${obj.isDir ? '/' : ''}`);
        if (deep && obj.isDir && ctx.view.mayRead(p)) await walk(p, true);
      }
    };
    await walk(ctx.target, depthHeader === 'infinity');
  }
  return ctx.reply.code(207).type('application/xml; charset=utf-8').send(multistatusBuffer(out));
}

export async function davProppatch(ctx: DavRequest) {
  const body = await readBody(ctx.req);
  const update = parseXml(body);
  if (!update || !is(update, DAV, 'propertyupdate')) throw new DavError(400, 'the body must be a propertyupdate');
  const obj = await ctx.mustStat(ctx.target);
  await ctx.checkLocks([{ p: ctx.target, deep: false }]);
  // Dead properties are metadata of the file: who may upload it may set them.
  ctx.view.requireCreate(ctx.target);
  const props = new Map(ctx.dead.of(ctx.target));
  const results: Array<{ key: string; xml: string; status: number }> = [];
  for (const op of update.children) {
    const set = is(op, DAV, 'set');
    if (!set && !is(op, DAV, 'remove')) continue;
    const prop = child(op, DAV, 'prop');
    for (const p of prop?.children ?? []) {
      const key = propKey(p.ns, p.name);
      const xml = `<${p.ns === DAV ? 'D:' : 'X:'}${p.name}${p.ns === DAV ? '' : ` xmlns:X="${p.ns}"`}/>`;
      if (LIVE_PROPS.has(key)) {
        results.push({ key, xml, status: 403 });
        continue;
      }
      if (set) props.set(key, serialize(p));
      else props.delete(key);
      results.push({ key, xml, status: 200 });
    }
  }
  const failed = results.some((r) => r.status !== 200);
  if (!failed) ctx.dead.set(ctx.target, props);
  const byStatus = new Map<number, string[]>();
  for (const r of results) {
    const status = failed && r.status === 200 ? 424 : r.status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), r.xml]);
  }
  const text: Record<number, string> = { 200: 'OK', 403: 'Forbidden', 424: 'Failed Dependency' };
  const propstats = [...byStatus].map(([status, xmls]) => `<D:propstat><D:prop>${xmls.join('')}</D:prop><D:status>HTTP/1.1 ${status} ${text[status]}</D:status></D:propstat>`).join('');
  const response = `<D:response><D:href>${ctx.href(ctx.target, obj.isDir)}</D:href>${propstats}</D:response>`;
  return ctx.reply.code(207).type('application/xml; charset=utf-8').send(multistatus(response));
}

function parsePropfind(el: XmlElement | undefined): PropRequest {
  if (!el) return { kind: 'allprop', include: [] };
  if (!is(el, DAV, 'propfind')) throw new DavError(400, 'the body must be a propfind');
  if (child(el, DAV, 'propname')) return { kind: 'propname' };
  const prop = child(el, DAV, 'prop');
  if (prop) return { kind: 'prop', keys: prop.children.map((c) => propKey(c.ns, c.name)) };
  const include = child(el, DAV, 'include');
  if (child(el, DAV, 'allprop')) return { kind: 'allprop', include: include ? include.children.map((c) => propKey(c.ns, c.name)) : [] };
  throw new DavError(400, 'propfind needs prop, propname or allprop');
}
