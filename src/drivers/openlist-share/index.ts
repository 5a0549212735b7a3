import path from 'node:path';
import { encodePath } from '../../util/encode-path.js';
import { cleanPath } from '../../util/paths.js';
import { PeerArchives } from '../alist-v3/archive.js';
import { callJson, INIT_TIMEOUT_MS, PeerError, peerBase, peerPath } from '../alist-v3/client.js';
import { type PeerObj, peerFailure, toObj } from '../alist-v3/index.js';
import {
  type ArchiveObj,
  defineDriver,
  type Driver,
  type DriverArchiveMeta,
  type Link,
  type Obj,
} from '../types.js';
import { ADDITIONAL, CONFIG } from './info.js';

/** A share id is one path segment of `/@s/<sid>` and `/sd/<sid>`. */
const SID = /^[^/\\\s?#]{1,128}$/;

/** The server's refusals of archives to share visitors (see forwarded). */
const REFUSED_ARCHIVES = /^(sharing archives previewing is not allowed|permission denied)$/;

/**
 * OpenList's "OpenListShare" driver: somebody's share link on a server of this API (OpenList v4 or
 * Atrium) mounted read-only, as a visitor: no account, the share code as the password of every
 * call. Listings and entries are `/api/fs/list|get` of `/@s/<sid>/<path>`, files are read from
 * `/sd/<sid>/<path>?pwd=<code>`. With `forward_archive_requests` on, archives are asked of the
 * server (`/api/fs/archive/meta|list` of the `/@s/` path, entries from `/sad`); when it refuses
 * archives to share visitors (its setting `share_archive_preview` off, or the share's creator
 * without the read-archives bit: a 403 on each call, so a change there counts at once), and with
 * forwarding off, this server reads them through the `/sd` link (a zip by byte ranges). The share
 * is checked when mounting, so a wrong code or an expired, disabled or deleted share shows as the
 * storage's status.
 */
export class OpenListShareDriver implements Driver {
  private readonly base: string;
  private readonly root: string;
  private readonly sid: string;
  private readonly archives: PeerArchives;

  constructor(private readonly opts: Record<string, unknown>) {
    this.base = String(opts.url).trim().replace(/\/+$/, '');
    this.root = cleanPath(String(opts.root_folder_path));
    this.sid = String(opts.sid).trim();
    this.archives = new PeerArchives(<T>(route: string, body: unknown) => this.call<T>(route, body), this.base);
  }

  private get pwd(): string {
    return String(this.opts.pwd ?? '');
  }

  async init(): Promise<void> {
    peerBase(this.base);
    if (!SID.test(this.sid)) throw new Error('sid must be a share id (the part after /@s/ of the link)');
    const root = await callJson<PeerObj>(this.base, 'POST', '/api/fs/get', '', { path: this.sharePath('/'), password: this.pwd }, INIT_TIMEOUT_MS);
    if (root.code !== 200) throw new Error(`share ${this.sid}: ${root.message}`);
  }

  async drop(): Promise<void> {}

  addition(): Record<string, unknown> {
    return this.opts;
  }

  private async call<T>(route: string, body: unknown): Promise<T> {
    const r = await callJson<T>(this.base, 'POST', route, '', body);
    if (r.code !== 200) throw peerFailure(r);
    return r.data;
  }

  /** The path inside the share (below the root option) of a storage path. */
  private inShare(p: string): string {
    return peerPath(this.root, p);
  }

  /** The path the server's `/api/fs/*` browse the share by. */
  private sharePath(p: string): string {
    const inner = this.inShare(p);
    return `/@s/${this.sid}${inner === '/' ? '' : inner}`;
  }

  async list(p: string): Promise<Obj[]> {
    const data = await this.call<{ content: PeerObj[] | null }>('/api/fs/list', { path: this.sharePath(p), password: this.pwd, page: 1, per_page: 0, refresh: false });
    return (data.content ?? []).map(toObj);
  }

  async get(p: string): Promise<Obj> {
    const data = await this.call<PeerObj>('/api/fs/get', { path: this.sharePath(p), password: this.pwd });
    return { ...toObj(data), name: p === '/' ? '' : path.posix.basename(p) };
  }

  /** The share's download route; the server checks the share and the code on every request. */
  async link(p: string): Promise<Link> {
    const inner = this.inShare(p);
    const query = this.pwd === '' ? '' : `?pwd=${encodeURIComponent(this.pwd)}`;
    return { url: `${this.base}/sd/${encodeURIComponent(this.sid)}${inner === '/' ? '' : encodePath(inner)}${query}` };
  }

  private get forward(): boolean {
    return this.opts.forward_archive_requests === true;
  }

  /**
   * A forwarded archive call; undefined (read here instead) when the server refuses archives to
   * share visitors: `403 sharing archives previewing is not allowed` (OpenList's and Atrium's), or
   * Atrium's `403 permission denied` for a creator without the read-archives bit.
   */
  private async forwarded<T>(run: () => Promise<T>): Promise<T | undefined> {
    if (!this.forward) return undefined;
    try {
      return await run();
    } catch (err) {
      if (err instanceof PeerError && err.code === 403 && REFUSED_ARCHIVES.test(err.message)) return undefined;
      throw err;
    }
  }

  archiveMeta(p: string, archivePass: string): Promise<DriverArchiveMeta | undefined> {
    return this.forwarded(() => this.archives.meta(this.sharePath(p), this.pwd, archivePass));
  }

  archiveList(p: string, inner: string, archivePass: string): Promise<ArchiveObj[] | undefined> {
    return this.forwarded(() => this.archives.list(this.sharePath(p), this.pwd, inner, archivePass));
  }

  /** The share's archive-entry route, `/sad/<sid>/<path>?pwd=&inner=&pass=` (OpenList's). */
  async archiveLink(p: string, inner: string, archivePass: string): Promise<Link | undefined> {
    if (!this.forward) return undefined;
    const file = this.inShare(p);
    const query = `pwd=${encodeURIComponent(this.pwd)}&inner=${encodePath(inner)}&pass=${encodeURIComponent(archivePass)}`;
    // Asking for JSON: a refusal comes as the server's envelope, not its HTML error page.
    return { url: `${this.base}/sad/${encodeURIComponent(this.sid)}${file === '/' ? '' : encodePath(file)}?${query}`, header: { accept: 'application/json' } };
  }
}

export const openListShareDriver = defineDriver(CONFIG, ADDITIONAL, (options) => new OpenListShareDriver(options));
