import path from 'node:path';
import { Readable } from 'node:stream';
import { encodePath } from '../../server/urls.js';
import { cleanPath, isSubPath } from '../../util/paths.js';
import { parseAliasPaths } from '../alias/index.js';
import {
  type Driver,
  type DriverContext,
  type DriverFactory,
  type Link,
  type LinkArgs,
  type Obj,
  ObjectNotFound,
  readAddition,
} from '../types.js';
import type { VirtualFs } from '../vfs.js';
import { saveStrmFiles, type SaveMode } from './save-local.js';
import { ADDITIONAL, CONFIG, MEDIA_TYPES, PASS_TYPES } from './info.js';

const extensions = (text: string): Set<string> =>
  new Set(
    text
      .split(',')
      .map((e) => e.trim().toLowerCase().replace(/^\./, ''))
      .filter(Boolean),
  );

const extOf = (name: string): string => {
  const i = name.lastIndexOf('.');
  return i <= 0 ? '' : name.slice(i + 1).toLowerCase();
};

/** What a name of the Strm tree stands for in the wrapped tree. */
type Entry =
  | { kind: 'dir'; obj: Obj }
  /** A file shown as it is (downloadFileTypes). */
  | { kind: 'pass'; source: string; obj: Obj }
  /** A media file shown as `<stem>.strm` holding its link. */
  | { kind: 'strm'; source: string; obj: Obj; content: Buffer };

/**
 * OpenList's Strm: other mounted paths shown for media servers (Emby, Jellyfin, Kodi). Every
 * media file (filterFileTypes) appears as `<stem>.strm` whose content is a link to the file
 * through this server (`<siteUrl><PathPrefix><path>[?sign=…]`); subtitles and other
 * downloadFileTypes pass through unchanged; everything else is left out. Read-only.
 */
export class StrmDriver implements Driver {
  private readonly targets: Map<string, string[]>;
  private readonly flat: boolean;
  private readonly media: Set<string>;
  private readonly pass: Set<string>;
  private base = '';

  constructor(
    private readonly opts: Record<string, unknown>,
    private readonly ctx: DriverContext,
  ) {
    this.targets = parseAliasPaths(String(opts.paths));
    this.flat = this.targets.size === 1;
    this.media = extensions(String(opts.filterFileTypes) || MEDIA_TYPES);
    this.pass = extensions(String(opts.downloadFileTypes) || PASS_TYPES);
  }

  private get vfs(): VirtualFs {
    if (!this.ctx.vfs) throw new Error('strm storages need the virtual file system');
    return this.ctx.vfs;
  }

  async init(): Promise<void> {
    if (this.targets.size === 0) throw new Error('paths is required');
    const own = cleanPath(this.ctx.mountPath);
    for (const list of this.targets.values()) {
      for (const t of list) if (isSubPath(own, t)) throw new Error(`strm path ${t} lies inside the strm storage itself (${own})`);
    }
    if (!this.opts.withoutUrl) {
      const site = String(this.opts.siteUrl).trim() || this.ctx.siteUrl || '';
      if (!/^https?:\/\/[^/]/i.test(site)) {
        throw new Error('siteUrl is required (the address media players reach this server at, e.g. http://nas:5244) unless site_url is an absolute URL or withoutUrl is on');
      }
      this.base = site.replace(/\/+$/, '');
    }
    if (this.opts.withSign && !this.ctx.sign) throw new Error('withSign needs link signing, which this server does not offer here');
    if (this.opts.SaveStrmToLocal && String(this.opts.SaveStrmLocalPath).trim() === '') throw new Error('SaveStrmLocalPath is required');
  }

  async drop(): Promise<void> {}

  addition(): Record<string, unknown> {
    return this.opts;
  }

  /** The link a `.strm` file holds for the wrapped file at virtual path `source`. */
  strmLink(source: string): string {
    let p = this.opts.encodePath ? encodePath(source) : source;
    if (this.opts.withSign) p += `?sign=${this.ctx.sign!(source)}`;
    const prefix = String(this.opts.PathPrefix ?? '').trim();
    if (prefix !== '') p = path.posix.join(prefix.startsWith('/') ? prefix : `/${prefix}`, p);
    if (!p.startsWith('/')) p = `/${p}`;
    return this.opts.withoutUrl ? p : this.base + p;
  }

  /** The wrapped folders a Strm folder stands for; undefined for the root of several names. */
  private sources(p: string): string[] | undefined {
    const segs = p.split('/').filter(Boolean);
    if (segs.some((s) => s === '.' || s === '..' || s.includes('\0'))) throw new ObjectNotFound();
    if (this.flat) return [...this.targets.values()][0]!.map((t) => cleanPath(path.posix.join(t, ...segs)));
    if (segs.length === 0) return undefined;
    const list = this.targets.get(segs[0]!);
    if (!list) throw new ObjectNotFound();
    return list.map((t) => cleanPath(path.posix.join(t, ...segs.slice(1))));
  }

  /** A wrapped folder's entries as this tree shows them; the first of several same names wins. */
  private convert(dir: string, objs: Obj[], into: Map<string, Entry>): void {
    for (const o of objs) {
      if (o.isDir) {
        if (!into.has(o.name)) into.set(o.name, { kind: 'dir', obj: { name: o.name, size: 0, isDir: true, modified: o.modified, thumb: o.thumb } });
        continue;
      }
      const ext = extOf(o.name);
      const source = cleanPath(path.posix.join(dir, o.name));
      if (this.pass.has(ext)) {
        if (!into.has(o.name)) into.set(o.name, { kind: 'pass', source, obj: { ...o } });
      } else if (this.media.has(ext)) {
        const name = `${o.name.slice(0, o.name.length - ext.length)}strm`;
        if (into.has(name)) continue;
        const content = Buffer.from(this.strmLink(source));
        into.set(name, { kind: 'strm', source, content, obj: { name, size: content.length, isDir: false, modified: o.modified, thumb: o.thumb } });
      }
    }
  }

  private async entries(p: string): Promise<Map<string, Entry>> {
    const dirs = this.sources(p);
    const out = new Map<string, Entry>();
    if (!dirs) {
      for (const name of this.targets.keys()) out.set(name, { kind: 'dir', obj: { name, size: 0, isDir: true, modified: new Date(0) } });
      return out;
    }
    let listed = false;
    let failure: unknown;
    for (const dir of dirs) {
      try {
        this.convert(dir, await this.vfs.list(dir), out);
        listed = true;
      } catch (err) {
        if (!(err instanceof ObjectNotFound)) failure ??= err;
      }
    }
    if (!listed) throw failure ?? new ObjectNotFound();
    if (this.opts.SaveStrmToLocal) await saveStrmFiles(String(this.opts.SaveStrmLocalPath), p, out, this.opts.SaveLocalMode as SaveMode, this.vfs);
    return out;
  }

  async list(p: string): Promise<Obj[]> {
    return [...(await this.entries(p)).values()].map((e) => e.obj);
  }

  private async entry(p: string): Promise<Entry> {
    const name = path.posix.basename(p);
    if (cleanPath(p) === '/' || (!this.flat && p.split('/').filter(Boolean).length === 1)) {
      this.sources(p);
      if (cleanPath(p) !== '/' && !this.targets.has(name)) throw new ObjectNotFound();
      return { kind: 'dir', obj: { name, size: 0, isDir: true, modified: new Date(0) } };
    }
    const e = (await this.entries(path.posix.dirname(p))).get(name);
    if (!e) throw new ObjectNotFound();
    return e;
  }

  async get(p: string): Promise<Obj> {
    return (await this.entry(p)).obj;
  }

  async link(p: string, args: LinkArgs): Promise<Link> {
    const e = await this.entry(p);
    if (e.kind === 'dir') throw new ObjectNotFound('not a file');
    if (e.kind === 'pass') return this.vfs.link(e.source, args);
    const { content } = e;
    return {
      contentType: 'text/plain; charset=utf-8',
      file: {
        size: content.length,
        modified: e.obj.modified,
        open: async (start, end) => Readable.from([content.subarray(start, end + 1)]),
      },
    };
  }
}

export const strmDriver: DriverFactory = {
  config: CONFIG,
  additional: ADDITIONAL,
  create: (addition, ctx) => new StrmDriver(readAddition(ADDITIONAL, addition), ctx),
};
