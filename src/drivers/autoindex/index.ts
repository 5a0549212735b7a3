import path from 'node:path';
import {
  defineDriver,
  type Driver,
  type DriverContext,
  type Link,
  type Obj,
  ObjectNotFound,
} from '../types.js';
import { Upstream } from '../../errors.js';
import { jsonDepthWithin, MAX_PEER_JSON_DEPTH, PeerAnswerTooLarge, readBounded } from '../peer-answer.js';
import { goTimeParser } from './go-time.js';
import { type IndexEntry, parseHtmlIndex, parseNginxJson, type XPaths } from './index-page.js';
import { compileNodesXPath, compileStringXPath } from './xpath-html.js';
import { ADDITIONAL, CONFIG } from './info.js';

/** The XPaths describe HTML pages only: a JSON index (nginx's json format) needs none of them. */
const READ_ITEMS = ADDITIONAL.map((i) => (i.name.endsWith('_xpath') ? { ...i, required: false } : i));

/** Index pages larger than this are refused rather than held in memory. */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

/**
 * OpenList's AutoIndex: a read-only storage over the folder index pages a web server writes
 * (nginx or Apache `autoindex`, lighttpd's dir-listing, …). HTML pages are read with the
 * configured XPaths as OpenList reads them; an index answered as JSON (nginx's
 * `autoindex_format json`) is read without them. Files are links to the server's own URLs.
 */
export class AutoindexDriver implements Driver {
  private readonly base: string;
  private readonly ignore: Set<string>;
  private readonly parseTime: (s: string) => Date | undefined;
  private paths?: XPaths;

  constructor(
    private readonly opts: Record<string, unknown>,
    private readonly ctx: DriverContext,
  ) {
    let url = String(opts.url).trim();
    if (!url.includes('://')) url = `https://${url}`;
    if (!url.endsWith('/')) url += '/';
    this.base = url;
    this.opts.url = url;
    this.ignore = new Set(String(opts.ignore_file_names).split('\n').map((s) => s.trim()).filter(Boolean));
    this.parseTime = goTimeParser(String(opts.modified_time_format) || '02-Jan-2006 15:04');
  }

  async init(): Promise<void> {
    try {
      new URL(this.base);
    } catch {
      throw new Error(`url ${this.base} is not a valid URL`);
    }
    const x = <T>(name: string, label: string, compile: (expr: string) => T): T | undefined => {
      const expr = String(this.opts[name] ?? '').trim();
      if (expr === '') return undefined;
      try {
        return compile(expr);
      } catch (err) {
        throw new Error(`failed to compile ${label} XPath: ${(err as Error).message}`);
      }
    };
    const itemX = x('item_xpath', 'Item', compileNodesXPath);
    const nameX = x('name_xpath', 'Name', compileStringXPath);
    const modified = x('modified_xpath', 'Modified', compileStringXPath);
    const size = x('size_xpath', 'Size', compileStringXPath);
    if (itemX && nameX) this.paths = { item: itemX, name: nameX, modified, size };
    else if (itemX || nameX) throw new Error('item_xpath and name_xpath go together');
    await this.entries('/');
  }

  async drop(): Promise<void> {}

  addition(): Record<string, unknown> {
    return this.opts;
  }

  /** The URL of a path below the root; `..`, `.` and NUL segments are refused. */
  private url(p: string, isDir: boolean): string {
    const segs = p.split('/').filter(Boolean);
    if (segs.some((s) => s === '.' || s === '..' || s.includes('\0'))) throw new ObjectNotFound();
    const rel = segs.map(encodeURIComponent).join('/');
    return new URL(rel + (isDir && rel !== '' ? '/' : ''), this.base).toString();
  }

  private async entries(p: string): Promise<IndexEntry[]> {
    const url = this.url(p, true);
    const res = await this.ctx.links.open({ url }, { headers: { accept: 'text/html, application/json' } });
    if (res.statusCode === 404 || res.statusCode === 403) {
      res.resume();
      throw new ObjectNotFound();
    }
    if (res.statusCode !== 200) {
      res.resume();
      throw new Upstream(`failed to get url [${url}]: HTTP ${res.statusCode}`);
    }
    const bytes = await readBounded(res, url, res.headers['content-encoding'] ? null : res.headers['content-length'], MAX_INDEX_BYTES);
    const body = bytes.toString('utf8');
    const type = String(res.headers['content-type'] ?? '');
    const json = type.includes('json') || (!type.includes('html') && /^\s*\[/.test(body));
    if (json && !jsonDepthWithin(bytes, MAX_PEER_JSON_DEPTH)) throw new PeerAnswerTooLarge(`${url} answered JSON nested deeper than ${MAX_PEER_JSON_DEPTH} levels`);
    if (!json && !this.paths) throw new Error(`${url} answers an HTML index: item_xpath and name_xpath are needed to read it`);
    try {
      return json ? parseNginxJson(body, this.ignore) : parseHtmlIndex(body, this.paths!, this.parseTime, this.ignore);
    } catch (err) {
      throw new Upstream(`failed to parse [${url}]: ${(err as Error).message.split('\n')[0]}`);
    }
  }

  private toObj(e: IndexEntry): Obj {
    return { name: e.name, size: e.size, isDir: e.isDir, modified: e.modified ?? new Date(0) };
  }

  async list(p: string): Promise<Obj[]> {
    return (await this.entries(p)).map((e) => this.toObj(e));
  }

  async get(p: string): Promise<Obj> {
    const segs = p.split('/').filter(Boolean);
    if (segs.length === 0) {
      this.url(p, true);
      return { name: '', size: 0, isDir: true, modified: new Date(0) };
    }
    const name = segs[segs.length - 1]!;
    const e = (await this.entries(path.posix.dirname(`/${segs.join('/')}`))).find((x) => x.name === name);
    if (!e) throw new ObjectNotFound();
    const obj = this.toObj(e);
    if (!e.isDir && !e.exactSize) obj.size = await this.contentLength(this.url(p, false), obj.size);
    return obj;
  }

  /** The exact size of a file whose index shows a rounded one (`1.2M`). */
  private async contentLength(url: string, fallback: number): Promise<number> {
    const res = await this.ctx.links.open({ url }, { method: 'HEAD' });
    res.resume();
    const n = Number(res.headers['content-length']);
    return res.statusCode === 200 && Number.isFinite(n) ? n : fallback;
  }

  async link(p: string): Promise<Link> {
    const obj = await this.get(p);
    if (obj.isDir) throw new ObjectNotFound('not a file');
    return { url: this.url(p, false) };
  }
}

export const autoindexDriver = defineDriver(CONFIG, ADDITIONAL, (options, ctx) => new AutoindexDriver(options, ctx), READ_ITEMS);
