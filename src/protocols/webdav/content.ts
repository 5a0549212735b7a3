// OPTIONS, GET / HEAD / POST and PUT: what a resource allows, its bytes out (as the download
// policy says: down-proxy, redirect or stream) and in.
import type { Readable } from 'node:stream';
import { can, PERM } from '../../auth/permissions.js';
import { downloadPlan, downProxyUrl, redirectOf } from '../../http/download-policy.js';
import { proxy } from '../../http/proxy.js';
import { sendFile } from '../../http/send-file.js';
import { DavError } from './errors.js';
import { davEtag } from './props.js';
import type { DavRequest } from './request.js';

export async function davOptions(ctx: DavRequest) {
  // Who may not read learns nothing about the path from the Allow header.
  const mayRead = !ctx.user.disabled && can(ctx.user, PERM.WEBDAV_READ);
  const obj = mayRead ? await ctx.stat(ctx.target).catch(() => undefined) : undefined;
  const allow = !obj
    ? 'OPTIONS, LOCK, PUT, MKCOL'
    : obj.isDir
      ? 'OPTIONS, LOCK, DELETE, PROPPATCH, COPY, MOVE, UNLOCK, PROPFIND'
      : 'OPTIONS, LOCK, GET, HEAD, POST, DELETE, PROPPATCH, COPY, MOVE, UNLOCK, PROPFIND, PUT';
  return ctx.reply.code(200).headers({ Allow: allow, DAV: '1, 2', 'MS-Author-Via': 'DAV', 'Content-Length': '0' }).send();
}

export async function davGet(ctx: DavRequest, head: boolean) {
  const obj = await ctx.mustStat(ctx.target);
  if (obj.isDir) {
    if (head) return ctx.reply.code(200).header('Content-Type', 'httpd/unix-directory').send();
    throw new DavError(405, 'Method Not Allowed');
  }
  const storage = ctx.view.storageOf(ctx.target);
  if (head) {
    // HEAD answers from the object's metadata, without asking the driver for a link.
    return sendFile(ctx.req, ctx.reply, {
      name: obj.name,
      size: obj.size,
      modified: obj.modified,
      etag: davEtag(obj),
      open: () => Promise.reject(new Error('HEAD reads no bytes')),
    });
  }
  const plan = downloadPlan('webdav', storage, ctx.target, ctx.core.settings);
  if (plan.downProxy) {
    ctx.reply.header('Cache-Control', 'max-age=0, no-cache, no-store, must-revalidate');
    return ctx.reply.redirect(downProxyUrl(plan.downProxy, ctx.target, ctx.core.signer.sign(ctx.target)), 302);
  }
  const got = await ctx.view.download(ctx.target, { ip: ctx.req.ip, header: ctx.req.headers });
  const to = redirectOf(plan, got.link);
  if (to) {
    got.sent(0);
    return ctx.reply.redirect(to, 302);
  }
  return proxy(ctx.core, ctx.req, ctx.reply, got.link, obj.name, obj.hash, storage, davEtag(obj), got);
}

export async function davPut(ctx: DavRequest) {
  const existing = await ctx.stat(ctx.target);
  if (existing?.isDir) throw new DavError(405, 'a collection exists at this path');
  const parent = await ctx.stat(ctx.parent(ctx.target));
  if (!parent?.isDir) throw new DavError(409, 'the parent collection does not exist');
  await ctx.checkLocks([{ p: ctx.target, deep: false }]);
  const name = ctx.view.checkPut(ctx.target);
  const h = ctx.req.headers;
  const declared = h['x-expected-entity-length'] ?? h['content-length'] ?? h['x-file-size'];
  const size = declared === undefined || h['transfer-encoding'] ? Number(h['x-expected-entity-length'] ?? h['x-file-size'] ?? -1) : Number(declared);
  if (!Number.isSafeInteger(size) || size < -1) throw new DavError(400, 'bad Content-Length');
  const mtime = Number(h['x-oc-mtime']);
  await ctx.view.put(
    ctx.target,
    { name, size, stream: ctx.req.raw as Readable, modified: Number.isFinite(mtime) && mtime > 0 ? new Date(mtime * 1000) : undefined, mimetype: h['content-type'] },
    true,
  );
  const obj = await ctx.stat(ctx.target);
  if (obj) ctx.reply.header('ETag', davEtag(obj));
  if (Number.isFinite(mtime) && mtime > 0) ctx.reply.header('X-OC-Mtime', 'accepted');
  // 201 also when a file was replaced, as the original answers.
  return ctx.reply.code(201).send();
}
