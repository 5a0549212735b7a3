import path from 'node:path';
import { Readable } from 'node:stream';
import { encodePath } from '../../util/encode-path.js';
import { cleanPath } from '../../util/paths.js';
import { AliasTargets, listEach } from '../alias/targets.js';
import { OverlayDriver } from '../overlay.js';
import {
  defineDriver,
  type Driver,
  type DriverContext,
  type Link,
  type LinkArgs,
  type Obj,
  ObjectNotFound,
} from '../types.js';
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
 * downloadFileTypes pass through unchanged; everything else is left out, media files under
 * minFileSize MB too. Read-only.
 */
export class StrmDriver extends OverlayDriver implements Driver {
  private readonly targets: AliasTargets;
  private readonly media: Set<string>;
  private readonly pass: Set<string>;
  /** Media files under this many bytes get no `.strm` (minFileSize, in MB). */
  private readonly minBytes: number;
  private base = '';

  constructor(opts: Record<string, unknown>, ctx: DriverContext) {
    super(opts, ctx, 'strm');
    this.targets = new AliasTargets(opts.paths);
    this.media = extensions(String(opts.filterFileTypes) || MEDIA_TYPES);
    this.pass = extensions(String(opts.downloadFileTypes) || PASS_TYPES);
    this.minBytes = Math.max(0, Number(opts.minFileSize) || 0) * 1024 * 1024;
  }

  async init(): Promise<void> {
    const own = cleanPath(this.ctx.mountPath);
    this.targets.check(own, (t) => `strm path ${t} lies inside the strm storage itself (${own})`);
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

  /** The link a `.strm` file holds for the wrapped file at virtual path `source`. */
  strmLink(source: string): string {
    let p = this.opts.encodePath ? encodePath(source) : source;
    if (this.opts.withSign) p += `?sign=${this.ctx.sign!(source)}`;
    const prefix = String(this.opts.PathPrefix ?? '').trim();
    if (prefix !== '') p = path.posix.join(prefix.startsWith('/') ? prefix : `/${prefix}`, p);
    if (!p.startsWith('/')) p = `/${p}`;
    return this.opts.withoutUrl ? p : this.base + p;
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
      } else if (this.media.has(ext) && o.size >= this.minBytes) {
        const name = `${o.name.slice(0, o.name.length - ext.length)}strm`;
        if (into.has(name)) continue;
        const content = Buffer.from(this.strmLink(source));
        into.set(name, { kind: 'strm', source, content, obj: { name, size: content.length, isDir: false, modified: o.modified, thumb: o.thumb } });
      }
    }
  }

  private async entries(p: string): Promise<Map<string, Entry>> {
    const dirs = this.targets.sources(p);
    const out = new Map<string, Entry>();
    if (!dirs) {
      for (const obj of this.targets.rootFolders()) out.set(obj.name, { kind: 'dir', obj });
      return out;
    }
    await listEach(this.vfs, dirs, (dir, objs) => this.convert(dir, objs, out));
    if (this.opts.SaveStrmToLocal) await saveStrmFiles(String(this.opts.SaveStrmLocalPath), p, out, this.opts.SaveLocalMode as SaveMode, this.vfs);
    return out;
  }

  async list(p: string): Promise<Obj[]> {
    return [...(await this.entries(p)).values()].map((e) => e.obj);
  }

  private async entry(p: string): Promise<Entry> {
    const own = this.targets.ownFolder(p);
    if (own) return { kind: 'dir', obj: own };
    const e = (await this.entries(path.posix.dirname(p))).get(path.posix.basename(p));
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

export const strmDriver = defineDriver(CONFIG, ADDITIONAL, (options, ctx) => new StrmDriver(options, ctx));
