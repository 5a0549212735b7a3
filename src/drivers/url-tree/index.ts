import {
  defineDriver,
  type Driver,
  type Link,
  type Obj,
  ObjectNotFound,
} from '../types.js';
import type { LinkFetcher } from '../../net/link-fetch.js';
import { nodeAt, parseUrlTree, type UrlNode } from './tree.js';
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

/** A read-only tree of URLs written as text; downloads redirect to (or are proxied from) the URLs. */
export class UrlTreeDriver implements Driver {
  private root: UrlNode = { name: '', isDir: true, children: [] };

  constructor(
    private readonly opts: Record<string, unknown>,
    private readonly links: LinkFetcher,
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

  async link(p: string): Promise<Link> {
    const n = this.node(p);
    if (n.isDir) throw new ObjectNotFound('not a file');
    // The URL is storage content: the server fetches it (/p, copies) only through the SSRF guard.
    return { url: n.url, untrustedUrl: true };
  }
}

export const urlTreeDriver = defineDriver(CONFIG, ADDITIONAL, (options, ctx) => new UrlTreeDriver(options, ctx.links));
