// LOCK (new or refreshed) and UNLOCK (RFC 4918 §9.10, §9.11).
import path from 'node:path';
import { Readable } from 'node:stream';
import { isAdmin } from '../../auth/permissions.js';
import { DavError } from './errors.js';
import { type Lock, parseTimeout } from './locks.js';
import { lockXml } from './props.js';
import { type DavRequest, readBody } from './request.js';
import { child, DAV, escapeXml, is, parseXml, serialize, type XmlElement } from './xml.js';

export async function davLock(ctx: DavRequest) {
  const body = await readBody(ctx.req);
  const timeout = parseTimeout(ctx.req.headers.timeout as string | undefined);
  const info = parseXml(body);
  if (!info) {
    // A refresh: the If header names the lock.
    const tokens = [...ctx.ownTokens()];
    const lock = tokens.map((t) => ctx.locks.get(t)).find((l): l is Lock => l !== undefined && ctx.locks.covering(ctx.target).includes(l));
    if (!lock) throw new DavError(412, 'no lock to refresh');
    return sendLock(ctx, await ctx.core.locks.refresh(lock, timeout), 200);
  }
  if (!is(info, DAV, 'lockinfo')) throw new DavError(400, 'the body must be a lockinfo');
  const scopeEl = child(info, DAV, 'lockscope');
  const scope = scopeEl && child(scopeEl, DAV, 'shared') ? 'shared' : scopeEl && child(scopeEl, DAV, 'exclusive') ? 'exclusive' : undefined;
  const typeEl = child(info, DAV, 'locktype');
  if (!scope || !typeEl || !child(typeEl, DAV, 'write')) throw new DavError(400, 'lockscope and a write locktype are required');
  const ownerEl = child(info, DAV, 'owner');
  const depthHeader = String(ctx.req.headers.depth ?? 'infinity').toLowerCase();
  if (!['0', 'infinity'].includes(depthHeader)) throw new DavError(400, 'Depth must be 0 or infinity');
  const existing = await ctx.stat(ctx.target);
  if (!existing) {
    const parent = await ctx.stat(ctx.parent(ctx.target));
    if (!parent?.isDir) throw new DavError(409, 'the parent collection does not exist');
  }
  await ctx.checkLocks([]);
  const { lock } = await ctx.core.locks.create(ctx.target, {
    scope,
    depth: depthHeader === '0' ? '0' : 'infinity',
    owner: ownerEl ? serializeOwner(ownerEl) : '',
    timeout,
    userId: ctx.user.id,
  });
  if (!lock) throw new DavError(423, 'Locked', {}, 'no-conflicting-lock');
  if (!existing) {
    // Locking an unmapped URL creates an empty resource (RFC 4918 §7.3).
    try {
      await ctx.view.put(ctx.target, { name: path.posix.basename(ctx.target), size: 0, stream: Readable.from([]) }, false);
    } catch (err) {
      await ctx.core.locks.unlock(ctx.target, lock.token);
      throw err;
    }
  }
  return sendLock(ctx, lock, existing ? 200 : 201);
}

function sendLock(ctx: DavRequest, lock: Lock, status: number) {
  const href = ctx.href(lock.root, false);
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<D:prop xmlns:D="DAV:"><D:lockdiscovery>${lockXml(lock, href)}</D:lockdiscovery></D:prop>`;
  return ctx.reply.code(status).header('Lock-Token', `<${lock.token}>`).type('application/xml; charset=utf-8').send(xml);
}

export async function davUnlock(ctx: DavRequest) {
  const header = String(ctx.req.headers['lock-token'] ?? '').trim();
  const token = header.replace(/^<|>$/g, '');
  if (!token) throw new DavError(400, 'Lock-Token header missing');
  const lock = ctx.locks.get(token);
  if (lock && lock.userId !== ctx.user.id && !isAdmin(ctx.user)) throw new DavError(403, 'the lock belongs to another user');
  if (!(await ctx.core.locks.unlock(ctx.target, token))) throw new DavError(409, 'no such lock on this resource', {}, 'lock-token-matches-request-uri');
  return ctx.reply.code(204).send();
}

/** The client's `<D:owner>` content, echoed back in lock discovery (namespaces declared inside). */
function serializeOwner(owner: XmlElement): string {
  return `<D:owner>${escapeXml(owner.text)}${owner.children.map(serialize).join('')}</D:owner>`;
}
