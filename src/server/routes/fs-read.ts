import path from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { mustProxy } from '../../drivers/form.js';
import type { Obj } from '../../drivers/types.js';
import { isoTime } from '../../fs/objects.js';
import type { Mounted } from '../../fs/storages.js';
import type { View } from '../../view/view.js';
import { ListingRenderer } from '../listing-render.js';
import { mountDetailsAt, withMountDetails } from '../mount-details.js';
import { childPath, objJson, objText } from '../obj-json.js';
import { ANY, apiRoute, authenticate, RawJson } from '../route.js';
import { isSharePath, shareGet, shareList } from './share-visit.js';
import { objShape } from '../shapes.js';
import { apiUrl, encodePath } from '../urls.js';
import { boolish, int, pageBounds } from '../validation.js';

const pathField = z.string().default('/');
/** Atrium's, for share visitors (`/@s/…`): the password of a protected folder inside the share. */
const folderPassword = z.string().max(1024).default('');

/** `/api/fs/list|get|dirs|other`: the reading API. */
export function fsReadRoutes(app: FastifyInstance, core: Core): void {
  const renderer = new ListingRenderer(core);
  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/list',
    output: z.object({ content: z.array(objShape).nullable(), total: z.number().int(), readme: z.string(), header: z.string(), write: z.boolean(), provider: z.string(), write_content_bypass: z.boolean() }),
    // A share visitor (`/@s/…`) needs no account; every other path authenticates below.
    auth: 'none',
    from: 'any',
    input: z.object({ path: pathField, password: z.string().default(''), folder_password: folderPassword, page: int().optional(), per_page: int().optional(), refresh: boolish().optional() }),
    handler: async ({ input, req }) => {
      if (isSharePath(input.path)) return shareList(core, req, input);
      const principal = (await authenticate(core, req, 'user'))!;
      const view = core.views.for(principal.user, { front: 'api', password: input.password });
      const reqPath = view.virtual(input.path);
      const { objs, storage, write, readme, header } = await view.list(reqPath, { refresh: input.refresh ?? false });
      const total = objs.length;
      const { start, end } = pageBounds(input, total);
      const signed = view.signTest(reqPath, storage);
      let items = renderer.items(objs, reqPath, storage, start, end, (o) => objText(core, o, reqPath, signed));
      // Only a folder where a storage is mounted carries details: none when nothing is mounted
      // right below this path (so a large folder is not walked for nothing).
      if (!core.settings.getBool('hide_storage_details') && core.storages.all().some((m) => m.actualMount !== reqPath && path.posix.dirname(m.actualMount) === reqPath)) {
        const shown = objs.slice(start, end);
        const details = await Promise.all(shown.map((o) => (o.isDir ? mountDetailsAt(core, childPath(reqPath, o.name)) : undefined)));
        items = items.map((text, i) => withMountDetails(text, details[i]));
      }
      const rest = {
        total,
        readme,
        header,
        write,
        provider: storage?.factory.config.name ?? 'unknown',
        write_content_bypass: view.rules.writeRuleApplies(reqPath),
        // `direct_upload_tools` (omitempty in OpenList) stays out: no driver here takes uploads
        // from the browser straight to its back end (OpenList's S3 and OneDrive do).
      };
      const content = total === 0 ? 'null' : `[${items.join(',')}]`;
      return new RawJson(`{"content":${content},${JSON.stringify(rest).slice(1)}`);
    },
  });

  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/get',
    output: objShape.extend({ raw_url: z.string(), readme: z.string(), header: z.string(), provider: z.string(), related: z.array(objShape).nullable() }),
    auth: 'none',
    from: 'any',
    input: z.object({ path: pathField, password: z.string().default(''), folder_password: folderPassword }),
    handler: async ({ input, req }) => {
      if (isSharePath(input.path)) return shareGet(core, req, input);
      const principal = (await authenticate(core, req, 'user'))!;
      const view = core.views.for(principal.user, { front: 'api', password: input.password });
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

  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/dirs',
    output: z.array(z.object({ name: z.string(), modified: z.string() })).nullable(),
    auth: 'user',
    from: 'any',
    input: z.object({ path: pathField, password: z.string().default(''), force_root: boolish().optional() }),
    handler: async ({ input, principal }) => {
      const view = core.views.for(principal.user, { front: 'api', password: input.password });
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
    handler: async ({ input, principal }) => {
      const view = core.views.for(principal.user, { front: 'api', password: input.password });
      return view.other(view.virtual(input.path), input.method, input.data);
    },
  });
}

/** `raw_url` of /api/fs/get (wire-api.md §6.4). */
async function rawUrlOf(core: Core, view: View, req: FastifyRequest, reqPath: string, storage: Mounted, signed: boolean): Promise<string> {
  const base = apiUrl(req, core.config.site_url);
  const sign = core.signer.sign(reqPath);
  if (mustProxy(storage.factory.config) || storage.row.web_proxy) {
    const downProxy = storage.row.down_proxy_url.split('\n')[0]?.trim();
    if (downProxy) return `${downProxy.replace(/\/+$/, '')}${encodePath(reqPath)}?sign=${sign}`;
    return `${base}/p${encodePath(reqPath)}${signed ? `?sign=${sign}` : ''}`;
  }
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
