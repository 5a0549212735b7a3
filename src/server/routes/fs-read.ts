import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { isAdmin } from '../../auth/permissions.js';
import type { User } from '../../db/users.js';
import type { Core } from '../../core.js';
import { mustProxy } from '../../drivers/form.js';
import type { Obj } from '../../drivers/types.js';
import { Forbidden } from '../../errors.js';
import { isoTime } from '../../fs/objects.js';
import type { Mounted } from '../../fs/storages.js';
import { joinBasePath } from '../../util/paths.js';
import { ListingRenderer } from '../listing-render.js';
import { objJson, objText } from '../obj-json.js';
import { ANY, apiRoute, RawJson } from '../route.js';
import { apiUrl, encodePath } from '../urls.js';
import { boolish, int } from '../validation.js';

const pathField = z.string().default('/');

/**
 * Which files of folder `dir` carry a sign: all with `sign_all` or the storage's enable_sign,
 * else those under a password or hiding rule (their raw links demand one).
 */
export function signTest(core: Core, dir: string, storage: Mounted | undefined): (name: string) => boolean {
  if (core.settings.getBool('sign_all') || storage?.row.enable_sign) return () => true;
  return core.access.signRule(dir);
}

/** `/api/fs/list|get|dirs|other`: the reading API. */
export function fsReadRoutes(app: FastifyInstance, core: Core): void {
  const renderer = new ListingRenderer(core);
  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/list',
    auth: 'user',
    from: 'any',
    input: z.object({ path: pathField, password: z.string().default(''), page: int().optional(), per_page: int().optional(), refresh: boolish().optional() }),
    handler: async ({ input, principal }) => {
      const user = principal.user;
      const reqPath = joinBasePath(user.basePath, input.path);
      core.access.check(user, reqPath, input.password);
      const write = core.access.canWrite(user, reqPath);
      if (input.refresh && !write) throw new Forbidden('Refresh without permission');
      const listed = await core.fs.list(reqPath, { refresh: input.refresh ?? false });
      const storage = listed.storage;
      const objs = core.access.visible(user, reqPath, listed.objs);
      const total = objs.length;
      const page = input.page && input.page > 0 ? input.page : 1;
      const perPage = input.per_page && input.per_page > 0 ? input.per_page : 0;
      const start = perPage > 0 ? Math.min((page - 1) * perPage, total) : 0;
      const end = perPage > 0 ? Math.min(start + perPage, total) : total;
      const signed = signTest(core, reqPath, storage);
      const items = renderer.items(objs, reqPath, storage, start, end, (o) => objText(core, o, reqPath, signed));
      const rest = { total, readme: core.access.readme(reqPath), header: core.access.header(reqPath), write, provider: storage?.factory.config.name ?? 'unknown' };
      const content = total === 0 ? 'null' : `[${items.join(',')}]`;
      return new RawJson(`{"content":${content},${JSON.stringify(rest).slice(1)}`);
    },
  });

  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/get',
    auth: 'user',
    from: 'any',
    input: z.object({ path: pathField, password: z.string().default('') }),
    handler: async ({ input, principal, req }) => {
      const user = principal.user;
      const reqPath = joinBasePath(user.basePath, input.path);
      core.access.check(user, reqPath, input.password);
      const { obj, storage } = await core.fs.get(reqPath);
      const parent = path.posix.dirname(reqPath);
      const signed = signTest(core, parent, storage);
      const json = objJson(core, obj, parent, signed, true);
      let rawUrl = '';
      let related: ReturnType<typeof objJson>[] | null = null;
      if (!obj.isDir && storage) {
        rawUrl = await rawUrlOf(core, req, reqPath, storage, signed(obj.name));
        related = await relatedOf(core, user, parent, obj, signed);
      }
      return {
        ...json,
        raw_url: rawUrl,
        readme: core.access.readme(reqPath),
        header: core.access.header(reqPath),
        provider: storage?.factory.config.name ?? 'unknown',
        related,
      };
    },
  });

  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/dirs',
    auth: 'user',
    from: 'any',
    input: z.object({ path: pathField, password: z.string().default(''), force_root: boolish().optional() }),
    handler: async ({ input, principal }) => {
      let reqPath: string;
      if (input.force_root) {
        if (!isAdmin(principal.user)) throw new Forbidden('Permission denied');
        reqPath = joinBasePath('/', input.path);
      } else {
        reqPath = joinBasePath(principal.user.basePath, input.path);
      }
      core.access.check(principal.user, reqPath, input.password);
      const objs = core.access.visible(principal.user, reqPath, (await core.fs.list(reqPath)).objs);
      const dirs = objs.filter((o) => o.isDir).map((o) => ({ name: core.names.apply(o.name), modified: isoTime(o.modified) }));
      return dirs.length === 0 ? null : dirs;
    },
  });

  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/other',
    auth: 'user',
    from: 'any',
    input: z.object({ path: pathField, method: z.string().min(1, 'method is required'), data: z.unknown().optional(), password: z.string().default('') }),
    handler: async ({ input, principal }) => {
      const reqPath = joinBasePath(principal.user.basePath, input.path);
      core.access.check(principal.user, reqPath, input.password);
      return core.fs.other(reqPath, input.method, input.data);
    },
  });
}

/** `raw_url` of /api/fs/get (wire-api.md §6.4). */
async function rawUrlOf(core: Core, req: FastifyRequest, reqPath: string, storage: Mounted, signed: boolean): Promise<string> {
  const base = apiUrl(req, core.config.site_url);
  const sign = core.signer.sign(reqPath);
  if (mustProxy(storage.factory.config) || storage.row.web_proxy) {
    const downProxy = storage.row.down_proxy_url.split('\n')[0]?.trim();
    if (downProxy) return `${downProxy.replace(/\/+$/, '')}${encodePath(reqPath)}?sign=${sign}`;
    return `${base}/p${encodePath(reqPath)}${signed ? `?sign=${sign}` : ''}`;
  }
  const { link } = await core.fs.link(reqPath, { ip: req.ip, header: req.headers });
  if (link.url) return link.url.startsWith('/') ? `${base}${link.url}` : link.url;
  return `${base}/d${encodePath(reqPath)}${signed ? `?sign=${sign}` : ''}`;
}

/** Files of the same folder whose names start with this file's name minus its extension. */
async function relatedOf(core: Core, user: User, parent: string, obj: Obj, signed: (name: string) => boolean) {
  const ext = path.posix.extname(obj.name);
  const stem = ext ? obj.name.slice(0, -ext.length) : obj.name;
  let siblings: Obj[];
  try {
    siblings = core.access.visible(user, parent, (await core.fs.list(parent)).objs);
  } catch {
    return null;
  }
  const related = siblings.filter((o) => !o.isDir && o.name !== obj.name && o.name.startsWith(stem));
  return related.length === 0 ? null : related.map((o) => objJson(core, o, parent, signed));
}
