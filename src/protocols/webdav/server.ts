import path from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { can, isAdmin, PERM } from '../../auth/permissions.js';
import type { Core } from '../../core.js';
import type { Obj } from '../../drivers/types.js';
import { isKind } from '../../errors.js';
import { proxy } from '../../server/routes/raw.js';
import { sendFile } from '../../server/send-file.js';
import { encodePath } from '../../server/urls.js';
import { cleanPath } from '../../util/paths.js';
import type { View } from '../../view/view.js';
import { authenticate, type Caller } from './auth.js';
import { DavError, toDavError } from './errors.js';
import { evaluateIf, type IfList, parseIfHeader, submittedTokens } from './if-header.js';
import { type Lock, LockManager, parseTimeout } from './locks.js';
import { DeadProps, davEtag, LIVE_PROPS, lockXml, multistatus, multistatusBuffer, type PropRequest, PropfindRenderers } from './props.js';
import { child, DAV, escapeXml, is, parseXml, propKey, serialize, type XmlElement } from './xml.js';

export const DAV_PREFIX = '/dav';
const METHODS = ['OPTIONS', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'PROPFIND', 'PROPPATCH'] as const;
const CUSTOM = ['MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'PROPFIND', 'PROPPATCH'];
/**
 * Methods that change something need the WebDAV manage bit. LOCK and UNLOCK too (unlike the
 * original): a lock only serves a writer, and a read-only user's lock would block the writers.
 */
const MANAGE = new Set(['PUT', 'DELETE', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK']);
const MAX_XML_BODY = 1024 * 1024;
/** Entries one `Depth: infinity` PROPFIND may describe before the server refuses it. */
const MAX_INFINITE_ENTRIES = 100_000;

/** What outlives a request: locks, dead properties, rendered PROPFIND entries. */
interface DavState {
  locks: LockManager;
  dead: DeadProps;
  renderers: PropfindRenderers;
}

/**
 * WebDAV at `/dav` (wire-api.md §15.1): a thin adapter over the user's view (view/), so the same
 * permission bits and path rules as every other front hold; in-memory locks and dead properties.
 */
export function webdavRoutes(app: FastifyInstance, core: Core): void {
  const state: DavState = { locks: new LockManager(), dead: new DeadProps(), renderers: new PropfindRenderers() };

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

/** The request's path below /dav, decoded; undefined when the URL is not under /dav. */
export function davPath(url: string): string | undefined {
  let p = url.split('?')[0]!;
  if (/^https?:\/\//i.test(p)) p = new URL(p).pathname;
  if (p !== DAV_PREFIX && !p.startsWith(`${DAV_PREFIX}/`)) return undefined;
  const rest = p.slice(DAV_PREFIX.length);
  try {
    return cleanPath(decodeURIComponent(rest));
  } catch {
    throw new DavError(400, 'malformed percent-encoding in the path');
  }
}

async function readBody(req: FastifyRequest): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req.raw) {
    size += chunk.length;
    if (size > MAX_XML_BODY) throw new DavError(413, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function handle(core: Core, state: DavState, req: FastifyRequest, reply: FastifyReply) {
  const caller = await authenticate(core, req);
  const method = req.method.toUpperCase();
  const { user } = caller;
  if (method !== 'OPTIONS') {
    if (user.disabled || !can(user, PERM.WEBDAV_READ)) throw new DavError(403, 'Forbidden');
    if (MANAGE.has(method) && !can(user, PERM.WEBDAV_MANAGE)) throw new DavError(403, 'Forbidden');
  }
  const view = core.views.for(user, { front: 'webdav', password: caller.password });
  const target = view.virtual(davPath(req.url) ?? '/');
  if (MANAGE.has(method)) view.requireChangeable(target);
  const ctx = new DavRequest(core, view, state, req, reply, caller, target);
  switch (method) {
    case 'OPTIONS':
      return ctx.options();
    case 'GET':
    case 'HEAD':
    case 'POST':
      return ctx.get(method === 'HEAD');
    case 'PUT':
      return ctx.put();
    case 'DELETE':
      return ctx.delete();
    case 'MKCOL':
      return ctx.mkcol();
    case 'COPY':
    case 'MOVE':
      return ctx.copyMove(method === 'MOVE');
    case 'LOCK':
      return ctx.lock();
    case 'UNLOCK':
      return ctx.unlock();
    case 'PROPFIND':
      return ctx.propfind();
    case 'PROPPATCH':
      return ctx.proppatch();
    default:
      throw new DavError(405, 'Method Not Allowed');
  }
}

/** One WebDAV request: the caller, its target path, and the method handlers. */
class DavRequest {
  private ifLists: IfList[] | undefined;
  private readonly locks: LockManager;
  private readonly dead: DeadProps;
  private readonly renderers: PropfindRenderers;

  constructor(
    private readonly core: Core,
    private readonly view: View,
    state: DavState,
    private readonly req: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly caller: Caller,
    private readonly target: string,
  ) {
    ({ locks: this.locks, dead: this.dead, renderers: this.renderers } = state);
    const header = req.headers.if;
    this.ifLists = typeof header === 'string' && header.trim() !== '' ? parseIfHeader(header) : undefined;
  }

  private get user() {
    return this.caller.user;
  }

  /** The href of a virtual path as this user sees it (below their base path). */
  private href(p: string, isDir: boolean): string {
    const base = cleanPath(this.user.basePath);
    const rel = base === '/' ? p : p.slice(base.length) || '/';
    const encoded = `${DAV_PREFIX}${encodePath(rel)}`;
    return isDir && !encoded.endsWith('/') ? `${encoded}/` : encoded;
  }

  /** The object at a path, or undefined when there is none or it is hidden; a missing folder password is 403. */
  private stat(p: string): Promise<Obj | undefined> {
    return this.view.find(p);
  }

  private async mustStat(p: string): Promise<Obj> {
    const obj = await this.stat(p);
    if (!obj) throw new DavError(404, 'Not Found');
    return obj;
  }

  /**
   * RFC 4918 §10.4 and §7: the If header must hold (else 412), and every lock covering what the
   * request changes must have its token submitted (else 423).
   */
  private async checkLocks(paths: Array<{ p: string; deep: boolean }>): Promise<void> {
    if (this.ifLists) {
      const ok = await evaluateIf(this.ifLists, async (resource) => {
        const p = resource === undefined ? this.target : this.pathOfUrl(resource);
        const obj = p === undefined ? undefined : await this.stat(p).catch(() => undefined);
        return { tokens: new Set(p === undefined ? [] : this.locks.covering(p).map((l) => l.token)), etag: obj && !obj.isDir ? davEtag(obj) : undefined };
      });
      if (!ok) throw new DavError(412, 'Precondition Failed');
    }
    const tokens = this.ownTokens();
    for (const { p, deep } of paths) {
      if (this.locks.blocking(p, tokens, deep).length > 0) throw new DavError(423, 'Locked');
    }
  }

  /** The lock tokens the If header submits that belong to this user's locks (another's token unlocks nothing). */
  private ownTokens(): Set<string> {
    const tokens = this.ifLists ? submittedTokens(this.ifLists) : new Set<string>();
    return new Set([...tokens].filter((t) => this.locks.get(t)?.userId === this.user.id));
  }

  /** A URL or path naming a resource of this server, as a virtual path of this user. */
  private pathOfUrl(url: string): string | undefined {
    let u: URL;
    try {
      u = new URL(url, `http://${this.req.headers.host ?? 'localhost'}`);
    } catch {
      return undefined;
    }
    const rel = davPath(u.pathname);
    return rel === undefined ? undefined : this.view.virtual(rel);
  }

  /** True when a Destination's host is this server as the client (or a reverse proxy) named it. */
  private servesHost(host: string): boolean {
    const names = [this.req.headers.host, this.req.headers['x-forwarded-host']].flatMap((h) => (typeof h === 'string' ? h.split(',') : []));
    return names.some((n) => {
      try {
        return new URL(`http://${n.trim()}`).host === host;
      } catch {
        return false;
      }
    });
  }

  private parent(p: string) {
    return path.posix.dirname(p);
  }

  async options() {
    // Who may not read learns nothing about the path from the Allow header.
    const mayRead = !this.user.disabled && can(this.user, PERM.WEBDAV_READ);
    const obj = mayRead ? await this.stat(this.target).catch(() => undefined) : undefined;
    const allow = !obj
      ? 'OPTIONS, LOCK, PUT, MKCOL'
      : obj.isDir
        ? 'OPTIONS, LOCK, DELETE, PROPPATCH, COPY, MOVE, UNLOCK, PROPFIND'
        : 'OPTIONS, LOCK, GET, HEAD, POST, DELETE, PROPPATCH, COPY, MOVE, UNLOCK, PROPFIND, PUT';
    return this.reply.code(200).headers({ Allow: allow, DAV: '1, 2', 'MS-Author-Via': 'DAV', 'Content-Length': '0' }).send();
  }

  async get(head: boolean) {
    const obj = await this.mustStat(this.target);
    if (obj.isDir) {
      if (head) return this.reply.code(200).header('Content-Type', 'httpd/unix-directory').send();
      throw new DavError(405, 'Method Not Allowed');
    }
    const storage = this.view.storageOf(this.target);
    if (head) {
      // HEAD answers from the object's metadata, without asking the driver for a link.
      return sendFile(this.req, this.reply, {
        name: obj.name,
        size: obj.size,
        modified: obj.modified,
        etag: davEtag(obj),
        open: () => Promise.reject(new Error('HEAD reads no bytes')),
      });
    }
    const policy = storage.row.webdav_policy;
    if (policy === 'use_proxy_url') {
      const downProxy = storage.row.down_proxy_url.split('\n')[0]?.trim();
      if (downProxy) {
        this.reply.header('Cache-Control', 'max-age=0, no-cache, no-store, must-revalidate');
        return this.reply.redirect(`${downProxy.replace(/\/+$/, '')}${encodePath(this.target)}?sign=${this.core.signer.sign(this.target)}`, 302);
      }
    }
    const { link } = await this.view.link(this.target, { ip: this.req.ip, header: this.req.headers });
    if (policy === '302_redirect' && link.url) return this.reply.redirect(link.url, 302);
    return proxy(this.core, this.req, this.reply, link, obj.name, obj.hash, storage, davEtag(obj));
  }

  async put() {
    const existing = await this.stat(this.target);
    if (existing?.isDir) throw new DavError(405, 'a collection exists at this path');
    const parent = await this.stat(this.parent(this.target));
    if (!parent?.isDir) throw new DavError(409, 'the parent collection does not exist');
    await this.checkLocks([{ p: this.target, deep: false }]);
    const name = this.view.checkPut(this.target);
    const h = this.req.headers;
    const declared = h['x-expected-entity-length'] ?? h['content-length'] ?? h['x-file-size'];
    const size = declared === undefined || h['transfer-encoding'] ? Number(h['x-expected-entity-length'] ?? h['x-file-size'] ?? -1) : Number(declared);
    if (!Number.isSafeInteger(size) || size < -1) throw new DavError(400, 'bad Content-Length');
    const mtime = Number(h['x-oc-mtime']);
    await this.view.put(
      this.target,
      { name, size, stream: this.req.raw as Readable, modified: Number.isFinite(mtime) && mtime > 0 ? new Date(mtime * 1000) : undefined, mimetype: h['content-type'] },
      true,
    );
    const obj = await this.stat(this.target);
    if (obj) this.reply.header('ETag', davEtag(obj));
    if (Number.isFinite(mtime) && mtime > 0) this.reply.header('X-OC-Mtime', 'accepted');
    // 201 also when a file was replaced, as the original answers.
    return this.reply.code(201).send();
  }

  async delete() {
    if (this.target === this.view.root) throw new DavError(403, 'the root can not be deleted');
    await this.mustStat(this.target);
    await this.checkLocks([{ p: this.target, deep: true }]);
    await this.view.removePath(this.target);
    this.locks.forget(this.target);
    this.dead.remove(this.target);
    return this.reply.code(204).send();
  }

  async mkcol() {
    const body = await readBody(this.req);
    if (body.length > 0) throw new DavError(415, 'MKCOL with a body is not supported');
    if (await this.stat(this.target)) throw new DavError(405, 'the resource exists');
    const parent = await this.stat(this.parent(this.target));
    if (!parent?.isDir) throw new DavError(409, 'the parent collection does not exist');
    await this.checkLocks([{ p: this.target, deep: false }]);
    try {
      await this.view.mkdir(this.target);
    } catch (err) {
      // A name taken by something the caller can't see (e.g. a link out of the storage): as MKCOL on an existing resource.
      if (isKind(err, 'Exists')) throw new DavError(405, (err as Error).message);
      throw err;
    }
    return this.reply.code(201).send();
  }

  async copyMove(move: boolean) {
    const destHeader = this.req.headers.destination;
    if (typeof destHeader !== 'string' || destHeader === '') throw new DavError(400, 'Destination header missing');
    let destUrl: URL;
    try {
      destUrl = new URL(destHeader, `http://${this.req.headers.host ?? 'localhost'}`);
    } catch {
      throw new DavError(400, 'bad Destination header');
    }
    if (/^[a-z][a-z0-9+.-]*:/i.test(destHeader) && !this.servesHost(destUrl.host)) throw new DavError(502, 'the destination is on another server');
    const destRel = davPath(destUrl.pathname);
    if (destRel === undefined) throw new DavError(502, 'the destination is outside /dav');
    const dest = this.view.virtual(destRel);
    const overwrite = String(this.req.headers.overwrite ?? 'T').toUpperCase() !== 'F';
    const depthHeader = String(this.req.headers.depth ?? 'infinity').toLowerCase();
    if (move && depthHeader !== 'infinity') throw new DavError(400, 'MOVE needs Depth: infinity');
    if (!['0', 'infinity'].includes(depthHeader)) throw new DavError(400, 'Depth must be 0 or infinity');
    await this.mustStat(this.target);
    if (dest === this.target) throw new DavError(403, 'source and destination are the same');
    const destParent = await this.stat(this.parent(dest));
    if (!destParent?.isDir) throw new DavError(409, 'the destination collection does not exist');
    const existing = await this.stat(dest);
    if (existing && !overwrite) throw new DavError(412, 'the destination exists');
    await this.checkLocks([...(move ? [{ p: this.target, deep: true }] : []), { p: dest, deep: true }]);
    if (move) {
      await this.view.moveTo(this.target, dest, overwrite);
      this.locks.forget(this.target);
      this.locks.forget(dest);
      this.dead.copy(this.target, dest, true);
    } else {
      await this.view.copyTo(this.target, dest, overwrite, depthHeader === '0');
      this.dead.copy(this.target, dest, false);
    }
    return this.reply.code(existing ? 204 : 201).send();
  }

  async lock() {
    const body = await readBody(this.req);
    const timeout = parseTimeout(this.req.headers.timeout as string | undefined);
    const info = parseXml(body);
    if (!info) {
      // A refresh: the If header names the lock.
      const tokens = [...this.ownTokens()];
      const lock = tokens.map((t) => this.locks.get(t)).find((l): l is Lock => l !== undefined && this.locks.covering(this.target).includes(l));
      if (!lock) throw new DavError(412, 'no lock to refresh');
      this.locks.refresh(lock.token, timeout);
      return this.sendLock(lock, 200);
    }
    if (!is(info, DAV, 'lockinfo')) throw new DavError(400, 'the body must be a lockinfo');
    const scopeEl = child(info, DAV, 'lockscope');
    const scope = scopeEl && child(scopeEl, DAV, 'shared') ? 'shared' : scopeEl && child(scopeEl, DAV, 'exclusive') ? 'exclusive' : undefined;
    const typeEl = child(info, DAV, 'locktype');
    if (!scope || !typeEl || !child(typeEl, DAV, 'write')) throw new DavError(400, 'lockscope and a write locktype are required');
    const ownerEl = child(info, DAV, 'owner');
    const depthHeader = String(this.req.headers.depth ?? 'infinity').toLowerCase();
    if (!['0', 'infinity'].includes(depthHeader)) throw new DavError(400, 'Depth must be 0 or infinity');
    const existing = await this.stat(this.target);
    if (!existing) {
      const parent = await this.stat(this.parent(this.target));
      if (!parent?.isDir) throw new DavError(409, 'the parent collection does not exist');
    }
    await this.checkLocks([]);
    const { lock } = this.locks.create(this.target, {
      scope,
      depth: depthHeader === '0' ? '0' : 'infinity',
      owner: ownerEl ? serializeOwner(ownerEl) : '',
      timeout,
      userId: this.user.id,
    });
    if (!lock) throw new DavError(423, 'Locked', {}, 'no-conflicting-lock');
    if (!existing) {
      // Locking an unmapped URL creates an empty resource (RFC 4918 §7.3).
      try {
        await this.view.put(this.target, { name: path.posix.basename(this.target), size: 0, stream: Readable.from([]) }, false);
      } catch (err) {
        this.locks.unlock(this.target, lock.token);
        throw err;
      }
    }
    return this.sendLock(lock, existing ? 200 : 201);
  }

  private sendLock(lock: Lock, status: number) {
    const href = this.href(lock.root, false);
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<D:prop xmlns:D="DAV:"><D:lockdiscovery>${lockXml(lock, href)}</D:lockdiscovery></D:prop>`;
    return this.reply.code(status).header('Lock-Token', `<${lock.token}>`).type('application/xml; charset=utf-8').send(xml);
  }

  async unlock() {
    const header = String(this.req.headers['lock-token'] ?? '').trim();
    const token = header.replace(/^<|>$/g, '');
    if (!token) throw new DavError(400, 'Lock-Token header missing');
    const lock = this.locks.get(token);
    if (lock && lock.userId !== this.user.id && !isAdmin(this.user)) throw new DavError(403, 'the lock belongs to another user');
    if (!this.locks.unlock(this.target, token)) throw new DavError(409, 'no such lock on this resource', {}, 'lock-token-matches-request-uri');
    return this.reply.code(204).send();
  }

  async propfind() {
    const body = await readBody(this.req);
    const request = parsePropfind(parseXml(body));
    const depthHeader = String(this.req.headers.depth ?? 'infinity').toLowerCase();
    if (!['0', '1', 'infinity'].includes(depthHeader)) throw new DavError(400, 'Depth must be 0, 1 or infinity');
    const root = await this.mustStat(this.target);
    const renderer = this.renderers.for(request);
    const out: Buffer[] = [];
    // Without locks and dead properties anywhere, listed entries need no per-path lookups.
    const plain = this.locks.isEmpty() && this.dead.isEmpty();
    const describe = (p: string, obj: Obj, href: string) => out.push(renderer.render({ obj, href, locks: this.locks.covering(p), dead: this.dead.of(p) }));
    describe(this.target, root.name === 'root' && this.target === '/' ? { ...root, name: '' } : root, this.href(this.target, root.isDir));
    if (root.isDir && depthHeader !== '0') {
      const walk = async (dir: string, deep: boolean) => {
        const { objs } = await this.view.list(dir);
        const dirHref = this.href(dir, true);
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
          if (deep && obj.isDir && this.view.mayRead(p)) await walk(p, true);
        }
      };
      await walk(this.target, depthHeader === 'infinity');
    }
    return this.reply.code(207).type('application/xml; charset=utf-8').send(multistatusBuffer(out));
  }

  async proppatch() {
    const body = await readBody(this.req);
    const update = parseXml(body);
    if (!update || !is(update, DAV, 'propertyupdate')) throw new DavError(400, 'the body must be a propertyupdate');
    const obj = await this.mustStat(this.target);
    await this.checkLocks([{ p: this.target, deep: false }]);
    // Dead properties are metadata of the file: who may upload it may set them.
    this.view.requireCreate(this.target);
    const props = new Map(this.dead.of(this.target));
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
    if (!failed) this.dead.set(this.target, props);
    const byStatus = new Map<number, string[]>();
    for (const r of results) {
      const status = failed && r.status === 200 ? 424 : r.status;
      byStatus.set(status, [...(byStatus.get(status) ?? []), r.xml]);
    }
    const text: Record<number, string> = { 200: 'OK', 403: 'Forbidden', 424: 'Failed Dependency' };
    const propstats = [...byStatus].map(([status, xmls]) => `<D:propstat><D:prop>${xmls.join('')}</D:prop><D:status>HTTP/1.1 ${status} ${text[status]}</D:status></D:propstat>`).join('');
    const response = `<D:response><D:href>${this.href(this.target, obj.isDir)}</D:href>${propstats}</D:response>`;
    return this.reply.code(207).type('application/xml; charset=utf-8').send(multistatus(response));
  }
}

/** The client's `<D:owner>` content, echoed back in lock discovery (namespaces declared inside). */
function serializeOwner(owner: XmlElement): string {
  return `<D:owner>${escapeXml(owner.text)}${owner.children.map(serialize).join('')}</D:owner>`;
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

