import path from 'node:path';
import { checkSegment, ObjectExists, PermissionDenied } from '../peer.js';
import {
  defineDriver,
  type Driver,
  type DriverContext,
  type Link,
  type Obj,
  ObjectNotFound,
} from '../types.js';
import type { LinkFetcher } from '../../net/link-fetch.js';
import { cloneNode, nodeAt, parseUrlTree, stringifyUrlTree, type UrlNode } from './tree.js';
import { ADDITIONAL, CONFIG } from './info.js';

const HEAD_TIMEOUT_MS = 10_000;
const HEAD_PARALLEL = 8;

/**
 * Content-Length of a HEAD answer; undefined when the server does not say, or when the SSRF
 * guard refuses the URL (a private address without url_fetch_allow_private: nothing is sent).
 */
async function headSize(links: LinkFetcher, url: string): Promise<number | undefined> {
  try {
    const res = await links.open({ url, untrustedUrl: true }, { method: 'HEAD', signal: AbortSignal.timeout(HEAD_TIMEOUT_MS) });
    res.resume();
    const status = res.statusCode ?? 0;
    const len = status >= 200 && status < 300 ? res.headers['content-length'] : undefined;
    return len !== undefined && /^\d+$/.test(len) ? Number(len) : undefined;
  } catch {
    return undefined;
  }
}

function files(node: UrlNode): UrlNode[] {
  return node.isDir ? node.children.flatMap(files) : [node];
}

/**
 * A tree of URLs written as text; downloads redirect to (or are proxied from) the URLs. With
 * `writable` (OpenList's), folders and entries can be made, renamed, moved, copied and removed:
 * each change is written back into `url_structure` and stored with the storage.
 */
export class UrlTreeDriver implements Driver {
  private root: UrlNode = { name: '', isDir: true, children: [] };

  constructor(
    private readonly opts: Record<string, unknown>,
    private readonly links: LinkFetcher,
    private readonly ctx?: Pick<DriverContext, 'saveAddition'>,
  ) {}

  async init(): Promise<void> {
    this.root = parseUrlTree(String(this.opts.url_structure));
    if (!this.opts.head_size) return;
    // Only for lines that give no size; a URL that does not answer keeps size 0.
    const unsized = files(this.root).filter((f) => f.size === undefined);
    for (let i = 0; i < unsized.length; i += HEAD_PARALLEL) {
      await Promise.all(unsized.slice(i, i + HEAD_PARALLEL).map(async (f) => (f.size = await headSize(this.links, f.url!))));
    }
  }

  async drop(): Promise<void> {}

  addition(): Record<string, unknown> {
    return this.opts;
  }

  private toObj(n: UrlNode): Obj {
    return { name: n.name, size: n.size ?? 0, isDir: n.isDir, modified: new Date((n.modified ?? 0) * 1000) };
  }

  private node(p: string): UrlNode {
    const n = nodeAt(this.root, p);
    if (!n) throw new ObjectNotFound();
    return n;
  }

  async list(p: string): Promise<Obj[]> {
    const n = this.node(p);
    if (!n.isDir) throw new ObjectNotFound('not a folder');
    return n.children.map((c) => this.toObj(c));
  }

  async get(p: string): Promise<Obj> {
    return this.toObj(this.node(p));
  }

  // ---- writes (`writable`) ----

  private folder(p: string): UrlNode {
    const n = this.node(p);
    if (!n.isDir) throw new ObjectNotFound('not a folder');
    return n;
  }

  /** Runs a change of the tree when writable, then stores the new structure. */
  private async change(fn: () => void): Promise<void> {
    if (!this.opts.writable) throw new PermissionDenied('this UrlTree storage is not writable');
    fn();
    this.opts.url_structure = stringifyUrlTree(this.root);
    await this.ctx?.saveAddition?.(this.opts);
  }

  private static add(dir: UrlNode, node: UrlNode): void {
    if (dir.children.some((c) => c.name === node.name)) throw new ObjectExists();
    dir.children.push(node);
  }

  private detach(p: string): UrlNode {
    const parent = this.folder(path.posix.dirname(p));
    const i = parent.children.findIndex((c) => c.name === path.posix.basename(p));
    if (i < 0) throw new ObjectNotFound();
    return parent.children.splice(i, 1)[0]!;
  }

  async makeDir(parent: string, name: string): Promise<void> {
    await this.change(() => UrlTreeDriver.add(this.folder(parent), { name: checkSegment(name), isDir: true, children: [] }));
  }

  async rename(p: string, newName: string): Promise<void> {
    await this.change(() => {
      const parent = this.folder(path.posix.dirname(p));
      const n = this.node(p);
      if (parent.children.some((c) => c.name === newName && c !== n)) throw new ObjectExists();
      n.name = checkSegment(newName);
    });
  }

  async move(src: string, dstDir: string): Promise<void> {
    await this.change(() => {
      if (`${dstDir}/`.startsWith(`${src}/`)) throw new Error('cannot move a folder into itself');
      const dst = this.folder(dstDir);
      if (dst.children.some((c) => c.name === path.posix.basename(src))) throw new ObjectExists();
      UrlTreeDriver.add(dst, this.detach(src));
    });
  }

  async copy(src: string, dstDir: string): Promise<void> {
    await this.change(() => {
      if (`${dstDir}/`.startsWith(`${src}/`)) throw new Error('cannot copy a folder into itself');
      UrlTreeDriver.add(this.folder(dstDir), cloneNode(this.node(src)));
    });
  }

  async remove(p: string): Promise<void> {
    await this.change(() => void this.detach(p));
  }

  async link(p: string): Promise<Link> {
    const n = this.node(p);
    if (n.isDir) throw new ObjectNotFound('not a file');
    // The URL is storage content: the server fetches it (/p, copies) only through the SSRF guard.
    return { url: n.url, untrustedUrl: true };
  }
}

export const urlTreeDriver = defineDriver(CONFIG, ADDITIONAL, (options, ctx) => new UrlTreeDriver(options, ctx.links, ctx));
