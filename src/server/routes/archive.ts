import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Core } from '../../core.js';
import { cleanInner } from '../../archive/entries.js';
import { archiveExtensions } from '../../archive/formats.js';
import { Forbidden, isExpected } from '../../errors.js';
import { envelopeCodeOf } from '../api-codes.js';
import { RawView } from '../../view/raw.js';
import { taskJson } from '../../tasks/manager.js';
import { ANY, apiRoute, authenticate, RawJson } from '../route.js';
import { isSharePath, shareArchiveList, shareArchiveMeta } from './share-visit.js';
import { archiveMetaShape, archiveObjShape, pageShape, taskShape } from '../shapes.js';
import { sendArchiveEntry } from '../../http/send-file.js';
import { PrivacyMask } from '../envelope.js';
import { rawLinkStatus, sendRawError } from '../raw-error.js';
import { downloadPlan } from '../../http/download-policy.js';
import { apiUrl } from '../../http/urls.js';
import { encodePath } from '../../util/encode-path.js';
import { archiveMetaJson, innerPage } from '../obj-json.js';
import { boolish, int, pageBounds } from '../validation.js';
import { originOf } from '../../http/origin.js';

const metaInput = z.object({
  path: z.string().default('/'),
  password: z.string().default(''),
  /** Atrium's, for share visitors (`/@s/…`): the password of a protected folder inside the share. */
  folder_password: z.string().max(1024).default(''),
  archive_pass: z.string().default(''),
  refresh: boolish().optional(),
});


/**
 * `/api/public/archive_extensions`, `/api/fs/archive/meta|list|decompress` (OpenList's shapes)
 * and the raw entry links `/ad/*`, `/ap/*`, `/ae/*`. Access is the per-user view's (the archive
 * file's hide, password and permission bits) and, for raw links, the archive path's sign; a
 * `/@s/<id>/…` path is a share visitor's, through the share's view (share-visit.ts).
 */
export function archiveRoutes(app: FastifyInstance, core: Core): void {
  archiveReadRoutes(app, core);
  decompressRoute(app, core);
  archiveEntryRoutes(app, core);
}

/** `/api/public/archive_extensions`, `/api/fs/archive/meta|list`: what an archive holds. */
function archiveReadRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: ANY,
    url: '/api/public/archive_extensions',
    output: z.array(z.string()).describe('file name suffixes of the archives that can be read'),
    auth: 'none',
    handler: () => archiveExtensions(),
  });

  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/archive/meta',
    // A share visitor (`/@s/…`) needs no account; every other path authenticates below.
    output: archiveMetaShape,
    auth: 'none',
    from: 'any',
    input: metaInput,
    handler: async ({ input, req }) => {
      if (isSharePath(input.path)) return shareArchiveMeta(core, req, input);
      const principal = (await authenticate(core, req, 'user'))!;
      const view = core.views.for(principal.user, { front: 'api', origin: originOf(req, 'api'), password: input.password });
      const reqPath = view.virtual(input.path);
      const meta = await view.archiveMeta(reqPath, { password: input.archive_pass, refresh: input.refresh ?? false });
      const parent = path.posix.dirname(reqPath);
      const signed = view.signTest(parent, view.storageOf(reqPath))(path.posix.basename(reqPath));
      return new RawJson(archiveMetaJson(core, meta, { raw_url: `${apiUrl(req, core.config.site_url)}/ae${encodePath(reqPath)}`, sign: signed ? core.signer.sign(reqPath) : '' }));
    },
  });

  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/archive/list',
    // A share visitor (`/@s/…`) needs no account; every other path authenticates below.
    output: pageShape(archiveObjShape),
    auth: 'none',
    from: 'any',
    input: metaInput.extend({ inner_path: z.string().default('/'), page: int().optional(), per_page: int().optional() }),
    handler: async ({ input, req }) => {
      if (isSharePath(input.path)) return shareArchiveList(core, req, input);
      const principal = (await authenticate(core, req, 'user'))!;
      const view = core.views.for(principal.user, { front: 'api', origin: originOf(req, 'api'), password: input.password });
      const reqPath = view.virtual(input.path);
      const folder = await view.archiveList(reqPath, cleanInner(input.inner_path), { password: input.archive_pass, refresh: input.refresh ?? false });
      return innerPage(core, folder, (total) => pageBounds(input, total));
    },
  });
}

/** `/api/fs/archive/decompress`: extraction tasks into a folder. */
function decompressRoute(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: 'POST',
    url: '/api/fs/archive/decompress',
    output: z.object({ task: z.array(taskShape) }),
    auth: 'user',
    input: z.object({
      src_dir: z.string().default('/'),
      dst_dir: z.string().default('/'),
      name: z.array(z.string()).default([]),
      archive_pass: z.string().default(''),
      /** Atrium's own: the folder password of a protected source or target folder. */
      password: z.string().default(''),
      inner_path: z.string().default('/'),
      cache_full: boolish().optional(),
      put_into_new_dir: boolish().optional(),
      overwrite: boolish().optional(),
    }),
    handler: async ({ input, principal, req }) => {
      const view = core.views.for(principal.user, { front: 'api', origin: originOf(req, 'api'), password: input.password });
      const tasks = await view.decompress(view.virtual(input.src_dir), input.name, view.virtual(input.dst_dir), {
        password: input.archive_pass,
        inner: cleanInner(input.inner_path),
        putIntoNewDir: input.put_into_new_dir ?? false,
        overwrite: input.overwrite ?? false,
      });
      return { task: tasks.map(taskJson) };
    },
  });
}

/** The raw entry links `/ad/*` (download), `/ap/*` (proxy) and `/ae/*` (preview). */
function archiveEntryRoutes(app: FastifyInstance, core: Core): void {
  const raw = new RawView(core);
  const entry = (kind: 'ad' | 'ap' | 'ae') => async (req: FastifyRequest, reply: FastifyReply) => {
    const virtualPath = raw.virtual((req.params as { '*': string })['*']);
    const query = req.query as { sign?: string; inner?: string; pass?: string };
    await core.storages.ready(virtualPath);
    const storage = raw.storageOf(virtualPath);
    raw.requireSign(virtualPath, storage, query.sign ?? '');
    const inner = cleanInner(query.inner);
    const name = path.posix.basename(inner);
    if (kind === 'ap') {
      // As /p: only where the storage proxies, or for the proxied types.
      if (downloadPlan('ap', storage, name, core.settings).refused) throw new Forbidden('proxy not allowed');
    }
    const controller = new AbortController();
    req.raw.once('close', () => controller.abort());
    const { stream, entry: e } = await raw.archiveEntry(virtualPath, inner, query.pass ?? '', originOf(req, 'raw'), controller.signal);
    await sendArchiveEntry(req, reply, stream, e, name);
  };
  // Failures answer as /d does: a real status with OpenList's error page (the JSON envelope for an
  // Accept asking it), so a download tool never stores an error as the entry; a wrong or missing
  // archive password keeps its 202 and an archive over the bomb limits its 400, as on the API.
  const mask = new PrivacyMask(core.settings);
  const statusOf = (err: unknown) => {
    const code = isExpected(err) ? envelopeCodeOf(err) : 500;
    return code === 202 || code === 400 ? code : rawLinkStatus(err);
  };
  for (const kind of ['ad', 'ap', 'ae'] as const) {
    const serve = entry(kind);
    const handler = async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        return await serve(req, reply);
      } catch (err) {
        return sendRawError(err, req, reply, mask, statusOf);
      }
    };
    app.route({ method: ['GET', 'HEAD'], url: `/${kind}/*`, handler });
  }
}
