import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import type * as Yazl from 'yazl';
import { z } from 'zod';
import type { Core } from '../../core.js';
import type { Obj } from '../../drivers/types.js';
import { BadRequest, Forbidden } from '../../errors.js';
import type { View } from '../../view/view.js';
import { ANY, apiRoute } from '../route.js';
import { contentDisposition } from '../../http/send-file.js';
import { lazyRequire } from '../../util/lazy-require.js';
import { originOf } from '../../http/origin.js';

/** The zip writer, loaded at the first zip download. */
const loadYazl = lazyRequire<typeof Yazl>('yazl');

/** Entries one archive may hold: the plan is listed before the first byte is sent. */
export const MAX_ARCHIVE_ENTRIES = 200_000;

const namesField = z.union([
  z.array(z.string()),
  // a browser form carries the list as one JSON field
  z.string().transform((s, ctx) => {
    try {
      const v: unknown = JSON.parse(s);
      if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
    } catch {
      /* reported below */
    }
    ctx.addIssue({ code: 'custom', message: 'names must be a list of names' });
    return z.NEVER;
  }),
]);

const input = z.object({
  dir: z.string().default('/'),
  names: namesField,
  password: z.string().default(''),
  /** The session token, for a browser form (which cannot send an Authorization header). */
  token: z.string().optional(),
  /** Only check access and count: the archive's size and entries, no bytes. */
  dry_run: z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]).optional(),
});

interface Planned {
  files: Array<{ virtualPath: string; zipPath: string; obj: Obj }>;
  emptyDirs: string[];
  bytes: number;
}

/**
 * What the archive will hold, read through the principal's view: every folder walked must be
 * readable (hide rules, folder passwords), hidden entries are left out, and a name can only be
 * an entry of `dir`, so nothing outside the principal's root can be reached.
 */
async function plan(view: View, dir: string, names: string[]): Promise<Planned> {
  if (names.length === 0) throw new BadRequest('names is empty');
  const out: Planned = { files: [], emptyDirs: [], bytes: 0 };
  const count = () => {
    if (out.files.length + out.emptyDirs.length > MAX_ARCHIVE_ENTRIES) throw new BadRequest(`an archive holds at most ${MAX_ARCHIVE_ENTRIES} entries`);
  };
  const walk = async (virtualPath: string, zipPath: string) => {
    const { objs } = await view.list(virtualPath);
    if (objs.length === 0) out.emptyDirs.push(`${zipPath}/`);
    for (const o of objs) {
      const child = path.posix.join(virtualPath, o.name);
      if (o.isDir) await walk(child, `${zipPath}/${o.name}`);
      else {
        out.files.push({ virtualPath: child, zipPath: `${zipPath}/${o.name}`, obj: o });
        out.bytes += o.size;
      }
      count();
    }
  };
  await view.folder(dir);
  for (const name of new Set(names)) {
    if (!name || name === '.' || name === '..' || /[/\\\0]/.test(name)) throw new BadRequest(`invalid name: ${name}`);
    const virtualPath = path.posix.join(dir, name);
    const { obj } = await view.get(virtualPath);
    if (obj.isDir) await walk(virtualPath, name);
    else {
      out.files.push({ virtualPath, zipPath: name, obj });
      out.bytes += obj.size;
    }
    count();
  }
  return out;
}

/**
 * `POST /api/fs/zip`: entries of one folder (files and whole folders) as one zip, streamed
 * as it is written: one file is read at a time, stored without compression, so memory stays
 * flat whatever the size. Everything is read through the principal's view, as /api/fs/get
 * and /api/fs/list read; the `package_download` setting turns the route off.
 */
export function archiveDownloadRoutes(app: FastifyInstance, core: Core): void {
  apiRoute(app, core, {
    method: ANY,
    url: '/api/fs/zip',
    output: z
      .object({ files: z.number().int(), folders: z.number().int(), size: z.number() })
      .describe('with dry_run; otherwise the answer is the ZIP archive itself (application/zip), not the envelope'),
    auth: 'none',
    from: 'any',
    input,
    handler: async ({ input, req, reply }) => {
      const { user } = await core.accounts.resolve(req.headers.authorization || input.token);
      // the original's switch for folder ("package") downloads
      if (!core.settings.getBool('package_download')) throw new Forbidden('package download is disabled');
      const view = core.views.for(user, { front: 'api', origin: originOf(req, 'api'), password: input.password });
      const dir = view.virtual(input.dir);
      const planned = await plan(view, dir, input.names);
      if (input.dry_run) return { files: planned.files.length, folders: planned.emptyDirs.length, size: planned.bytes };

      const zip = new (loadYazl().ZipFile)();
      const out = zip.outputStream as Readable;
      // a file that fails to open or read ends the archive (yazl reports it on the ZipFile)
      zip.on('error', (err: Error) => out.destroy(err));
      for (const f of planned.files) {
        zip.addReadStreamLazy(f.zipPath, { mtime: f.obj.modified, compress: false }, (cb) => {
          view.openRead(f.virtualPath).then(
            ({ stream }) => cb(null, stream),
            (err: Error) => cb(err, undefined as never),
          );
        });
      }
      for (const d of planned.emptyDirs) zip.addEmptyDirectory(d);
      zip.end();

      const single = input.names.length === 1 ? input.names[0]! : path.posix.basename(dir) || 'files';
      reply.hijack();
      reply.raw.writeHead(200, {
        'content-type': 'application/zip',
        'content-disposition': contentDisposition('attachment', `${single}.zip`),
        'cache-control': 'no-store',
      });
      try {
        await pipeline(out, reply.raw);
      } catch (err) {
        // headers are gone: the only honest signal left is a cut connection
        core.log.warn({ err, dir }, 'archive download stopped');
        reply.raw.destroy();
      }
    },
  });
}
