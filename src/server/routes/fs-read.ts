import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import type { Obj } from '../../drivers/types.js';
import { isoTime } from '../../fs/objects.js';
import type { Mounted } from '../../fs/storages.js';
import type { View } from '../../view/view.js';
import { ListingRenderer, listingAnswer } from '../listing-render.js';
import { mountDetailsAt, withMountDetails } from '../mount-details.js';
import { childPath, objJson, objText } from '../obj-json.js';
import { ANY, apiRoute, authenticate, RawJson } from '../route.js';
import { isSharePath, shareGet, shareList } from './share-visit.js';
import { getShape, listShape } from '../shapes.js';
import { downloadPlan, downProxyUrl } from '../../http/download-policy.js';
import { apiUrl } from '../../http/urls.js';
import { encodePath } from '../../util/encode-path.js';
import { boolish, int, pageBounds } from '../validation.js';
import { originOf } from '../../http/origin.js';

const pathField = z.string().default('/');
/** Atrium's, for share visitors (`/@s/…`): the password of a protected folder inside the share. */
const folderPassword = z.string().max(1024).default('');

/** `/api/fs/list|get|dirs|other`: the reading API. */
export function fsReadRoutes(app: FastifyInstance, core: Core): void {
  listRoute(app, core);
  getRoute(app, core);
  dirsAndOtherRoutes(app, core);
}

/** `/api/fs/list`: a page of a folder's entries, rendered once per listing (ListingRenderer). */
function listRoute(app: FastifyInstance, core: Core): void {
  const renderer = new ListingRenderer(core);
  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/list',
    output: listShape,
    // A share visitor (`/@s/…`) needs no account; every other path authenticates below.
    auth: 'none',
    from: 'any',
    input: z.object({ path: pathField, password: z.string().default(''), folder_password: folderPassword, page: int().optional(), per_page: int().optional(), refresh: boolish().optional() }),
    handler: async ({ input, req }) => {
      if (isSharePath(input.path)) return shareList(core, req, input);
      const principal = (await authenticate(core, req, 'user'))!;
      const view = core.views.for(principal.user, { front: 'api', origin: originOf(req, 'api'), password: input.password });
      const reqPath = view.virtual(input.path);
      const { objs, storage, write, readme, header } = await view.list(reqPath, { refresh: input.refresh ?? false });
      const total = objs.length;
      const { start, end } = pageBounds(input, total);
      const signed = view.signTest(reqPath, storage);
      const render = (o: Obj) => objText(core, o, reqPath, signed);
      let items = (from: number, to: number) => renderer.items(objs, reqPath, storage, from, to, render);
      // Only a folder where a storage is mounted carries details: none when nothing is mounted
      // right below this path (so a large folder is not walked for nothing).
      if (!core.settings.getBool('hide_storage_details') && core.storages.all().some((m) => m.actualMount !== reqPath && path.posix.dirname(m.actualMount) === reqPath)) {
        const shown = objs.slice(start, end);
        const details = await Promise.all(shown.map((o) => (o.isDir ? mountDetailsAt(core, childPath(reqPath, o.name)) : undefined)));
        const plain = items;
        items = (from, to) => plain(from, to).map((text, i) => withMountDetails(text, details[from - start + i]));
      }
      // `direct_upload_tools` is omitempty in OpenList: only where the storage offers one and the
      // user may upload here (the S3 driver with enable_direct_upload).
      const tools = view.directUploadTools(reqPath);
      const rest = {
        total,
        readme,
        header,
        write,
        provider: storage?.factory.config.name ?? 'unknown',
        write_content_bypass: view.rules.writeRuleApplies(reqPath),
        ...(tools.length > 0 ? { direct_upload_tools: tools } : {}),
      };
      return listingAnswer({ total, start, end, items, rest: JSON.stringify(rest) });
    },
  });
}

/** `/api/fs/get`: one object with its raw link and related files. */
function getRoute(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/get',
    output: getShape,
    auth: 'none',
    from: 'any',
    input: z.object({ path: pathField, password: z.string().default(''), folder_password: folderPassword }),
    handler: async ({ input, req }) => {
      if (isSharePath(input.path)) return shareGet(core, req, input);
      const principal = (await authenticate(core, req, 'user'))!;
      const view = core.views.for(principal.user, { front: 'api', origin: originOf(req, 'api'), password: input.password });
      const reqPath = view.virtual(input.path);
      const { obj, storage } = await view.get(reqPath);
      const parent = path.posix.dirname(reqPath);
      const signed = view.signTest(parent, storage);
      const json = objJson(core, obj, parent, signed, true);
      let rawUrl = '';
      let related: ReturnType<typeof objJson>[] | null = null;
      if (!obj.isDir && storage) {
        rawUrl = await rawUrlOf(core, view, req, reqPath, storage, signed(obj.name));
        related = await relatedOf(core, view, parent, obj, signed);
      }
      const mountDetails = obj.isDir ? await mountDetailsAt(core, reqPath) : undefined;
      return {
        ...json,
        ...(mountDetails ? { mount_details: mountDetails } : {}),
        raw_url: rawUrl,
        readme: view.readme(reqPath),
        header: view.header(reqPath),
        provider: storage?.factory.config.name ?? 'unknown',
        related,
      };
    },
  });
}

/** `/api/fs/dirs` (the folder picker's) and `/api/fs/other` (a driver's own method). */
function dirsAndOtherRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/dirs',
    output: z.array(z.object({ name: z.string(), modified: z.string() })).nullable(),
    auth: 'user',
    from: 'any',
    input: z.object({ path: pathField, password: z.string().default(''), force_root: boolish().optional() }),
    handler: async ({ input, principal, req }) => {
      const view = core.views.for(principal.user, { front: 'api', origin: originOf(req, 'api'), password: input.password });
      const reqPath = input.force_root ? view.virtualFromTop(input.path) : view.virtual(input.path);
      const { objs } = await view.list(reqPath);
      const dirs = objs.filter((o) => o.isDir).map((o) => ({ name: core.names.apply(o.name), modified: isoTime(o.modified) }));
      return dirs.length === 0 ? null : dirs;
    },
  });

  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/other',
    output: z.unknown().describe("what the driver answers"),
    auth: 'user',
    from: 'any',
    input: z.object({ path: pathField, method: z.string().min(1, 'method is required'), data: z.unknown().optional(), password: z.string().default('') }),
    handler: async ({ input, principal, req }) => {
      const view = core.views.for(principal.user, { front: 'api', origin: originOf(req, 'api'), password: input.password });
      return view.other(view.virtual(input.path), input.method, input.data);
    },
  });
}

/** `raw_url` of /api/fs/get (wire-api.md §6.4). */
async function rawUrlOf(core: Core, view: View, req: FastifyRequest, reqPath: string, storage: Mounted, signed: boolean): Promise<string> {
  const base = apiUrl(req, core.config.site_url);
  const sign = core.signer.sign(reqPath);
  const plan = downloadPlan('raw_url', storage, reqPath, core.settings);
  if (plan.downProxy) return downProxyUrl(plan.downProxy, reqPath, sign);
  if (plan.proxied) return `${base}/p${encodePath(reqPath)}${signed ? `?sign=${sign}` : ''}`;
  const { link } = await view.link(reqPath, { ip: req.ip, header: req.headers });
  if (link.url) return link.url.startsWith('/') ? `${base}${link.url}` : link.url;
  return `${base}/d${encodePath(reqPath)}${signed ? `?sign=${sign}` : ''}`;
}

/** Files of the same folder whose names start with this file's name minus its extension. */
async function relatedOf(core: Core, view: View, parent: string, obj: Obj, signed: (name: string) => boolean) {
  const ext = path.posix.extname(obj.name);
  const stem = ext ? obj.name.slice(0, -ext.length) : obj.name;
  let siblings: Obj[];
  try {
    siblings = (await view.list(parent)).objs;
  } catch {
    return null;
  }
  const related = siblings.filter((o) => !o.isDir && o.name !== obj.name && o.name.startsWith(stem));
  return related.length === 0 ? null : related.map((o) => objJson(core, o, parent, signed));
}
