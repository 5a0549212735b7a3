// DELETE, MKCOL, COPY and MOVE: the resources' names and places (with their locks and dead properties).
import { isKind } from '../../errors.js';
import { DavError } from './errors.js';
import { type DavRequest, davPath, readBody } from './request.js';

export async function davDelete(ctx: DavRequest) {
  if (ctx.target === ctx.view.root) throw new DavError(403, 'the root can not be deleted');
  await ctx.mustStat(ctx.target);
  await ctx.checkLocks([{ p: ctx.target, deep: true }]);
  await ctx.view.removePath(ctx.target);
  await ctx.core.locks.forget(ctx.target);
  ctx.dead.remove(ctx.target);
  return ctx.reply.code(204).send();
}

export async function davMkcol(ctx: DavRequest) {
  const body = await readBody(ctx.req);
  if (body.length > 0) throw new DavError(415, 'MKCOL with a body is not supported');
  if (await ctx.stat(ctx.target)) throw new DavError(405, 'the resource exists');
  const parent = await ctx.stat(ctx.parent(ctx.target));
  if (!parent?.isDir) throw new DavError(409, 'the parent collection does not exist');
  await ctx.checkLocks([{ p: ctx.target, deep: false }]);
  try {
    await ctx.view.mkdir(ctx.target);
  } catch (err) {
    // A name taken by something the caller can't see (e.g. a link out of the storage): as MKCOL on an existing resource.
    if (isKind(err, 'Exists')) throw new DavError(405, (err as Error).message);
    throw err;
  }
  return ctx.reply.code(201).send();
}

export async function davCopyMove(ctx: DavRequest, move: boolean) {
  const destHeader = ctx.req.headers.destination;
  if (typeof destHeader !== 'string' || destHeader === '') throw new DavError(400, 'Destination header missing');
  let destUrl: URL;
  try {
    destUrl = new URL(destHeader, `http://${ctx.req.headers.host ?? 'localhost'}`);
  } catch {
    throw new DavError(400, 'bad Destination header');
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(destHeader) && !ctx.servesHost(destUrl.host)) throw new DavError(502, 'the destination is on another server');
  const destRel = davPath(destUrl.pathname);
  if (destRel === undefined) throw new DavError(502, 'the destination is outside /dav');
  const dest = ctx.view.virtual(destRel);
  const overwrite = String(ctx.req.headers.overwrite ?? 'T').toUpperCase() !== 'F';
  const depthHeader = String(ctx.req.headers.depth ?? 'infinity').toLowerCase();
  if (move && depthHeader !== 'infinity') throw new DavError(400, 'MOVE needs Depth: infinity');
  if (!['0', 'infinity'].includes(depthHeader)) throw new DavError(400, 'Depth must be 0 or infinity');
  await ctx.mustStat(ctx.target);
  if (dest === ctx.target) throw new DavError(403, 'source and destination are the same');
  const destParent = await ctx.stat(ctx.parent(dest));
  if (!destParent?.isDir) throw new DavError(409, 'the destination collection does not exist');
  const existing = await ctx.stat(dest);
  if (existing && !overwrite) throw new DavError(412, 'the destination exists');
  await ctx.checkLocks([...(move ? [{ p: ctx.target, deep: true }] : []), { p: dest, deep: true }]);
  if (move) {
    await ctx.view.moveTo(ctx.target, dest, overwrite);
    await ctx.core.locks.forget(ctx.target);
    await ctx.core.locks.forget(dest);
    ctx.dead.copy(ctx.target, dest, true);
  } else {
    await ctx.view.copyTo(ctx.target, dest, overwrite, depthHeader === '0');
    ctx.dead.copy(ctx.target, dest, false);
  }
  return ctx.reply.code(existing ? 204 : 201).send();
}
