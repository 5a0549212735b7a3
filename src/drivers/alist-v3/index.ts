import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline, type Readable } from 'node:stream';
import { wrongPassword } from '../../archive/reader.js';
import { cleanPath } from '../../util/paths.js';
import {
  defineDriver,
  type Driver,
  type DriverContext,
  type Link,
  type LinkArgs,
  type Obj,
  ObjectNotFound,
  type UploadStream,
} from '../types.js';
import { CheckedStream, writeUploadTo } from '../write-file.js';
import { callJson, type Envelope, INIT_TIMEOUT_MS, PeerError, peerBase, peerPath, putStream } from './client.js';
import { ADDITIONAL, CONFIG } from './info.js';
export { ADDITIONAL } from './info.js';

/** An entry of the peer's /api/fs/list or /api/fs/get. */
export interface PeerObj {
  name: string;
  size: number;
  is_dir: boolean;
  modified: string;
  created?: string;
  thumb?: string;
  hash_info?: Record<string, string> | null;
  raw_url?: string;
}

export function toObj(o: PeerObj): Obj {
  const modified = new Date(o.modified);
  const created = o.created ? new Date(o.created) : undefined;
  const obj: Obj = { name: o.name, size: o.size, isDir: o.is_dir, modified: Number.isNaN(modified.getTime()) ? new Date(0) : modified };
  if (created && !Number.isNaN(created.getTime())) obj.created = created;
  if (o.thumb) obj.thumb = o.thumb;
  if (o.hash_info && Object.keys(o.hash_info).length > 0) obj.hash = { ...o.hash_info };
  return obj;
}

/**
 * The peer's refusal as this server reports it: missing objects typed, a wrong archive password
 * (code 202) as this server's own, the rest with its text.
 */
export function peerFailure(e: Envelope): Error {
  if (/object not found|storage not found/.test(e.message)) return new ObjectNotFound();
  if (e.code === 202) return wrongPassword();
  return new PeerError(e.code, e.message);
}

/**
 * Another server of this API (AList v3, OpenList or Atrium) mounted as a storage: every operation
 * is a call of its HTTP API, downloads are redirected to (or proxied from) its raw URLs.
 */
export class AlistV3Driver implements Driver {
  protected readonly base: string;
  private readonly root: string;

  constructor(
    private readonly opts: Record<string, unknown>,
    private readonly ctx: DriverContext,
  ) {
    this.base = String(opts.url).trim().replace(/\/+$/, '');
    this.root = cleanPath(String(opts.root_folder_path));
  }

  private get token(): string {
    return String(this.opts.token ?? '');
  }

  async init(): Promise<void> {
    peerBase(this.base);
    if (this.opts.username && !this.token) await this.login();
    const me = await callJson<{ username: string; role: number }>(this.base, 'GET', '/api/me', this.token, undefined, INIT_TIMEOUT_MS);
    if (me.code === 401 && this.opts.username) {
      await this.login();
      const again = await callJson<{ username: string }>(this.base, 'GET', '/api/me', this.token, undefined, INIT_TIMEOUT_MS);
      if (again.code !== 200) throw new Error(again.message);
    } else if (me.code !== 200) {
      throw new Error(me.message);
    }
  }

  private async login(): Promise<void> {
    const r = await callJson<{ token: string }>(this.base, 'POST', '/api/auth/login', '', { username: this.opts.username, password: this.opts.password }, INIT_TIMEOUT_MS);
    if (r.code !== 200) throw new Error(`login to ${this.base} failed: ${r.message}`);
    this.opts.token = r.data.token;
  }

  async drop(): Promise<void> {}

  addition(): Record<string, unknown> {
    return this.opts;
  }

  /** One API call; an expired or revoked token is renewed once by logging in again. */
  protected async call<T>(route: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
    let r = await callJson<T>(this.base, 'POST', route, this.token, body, undefined, headers);
    if (r.code === 401 && this.opts.username) {
      await this.login();
      r = await callJson<T>(this.base, 'POST', route, this.token, body, undefined, headers);
    }
    if (r.code !== 200) throw peerFailure(r);
    return r.data;
  }

  protected remote(p: string): string {
    return peerPath(this.root, p);
  }

  protected get metaPassword(): string {
    return String(this.opts.meta_password ?? '');
  }

  /** Whether a client's refresh reaches the peer's own listing cache (the OpenList driver's switch). */
  protected get passRefresh(): boolean {
    return false;
  }

  async list(p: string, args: { refresh?: boolean } = {}): Promise<Obj[]> {
    const refresh = this.passRefresh && args.refresh === true;
    const data = await this.call<{ content: PeerObj[] | null }>('/api/fs/list', { path: this.remote(p), password: this.metaPassword, page: 1, per_page: 0, refresh });
    return (data.content ?? []).map(toObj);
  }

  async get(p: string): Promise<Obj> {
    const data = await this.call<PeerObj>('/api/fs/get', { path: this.remote(p), password: this.metaPassword });
    return { ...toObj(data), name: p === '/' ? '' : path.posix.basename(p) };
  }

  /** Headers of the client a link is for, passed to the peer when it asks for a link (none here). */
  protected clientHeaders(_args: LinkArgs): Record<string, string> {
    return {};
  }

  async link(p: string, args: LinkArgs = {}): Promise<Link> {
    const data = await this.call<PeerObj>('/api/fs/get', { path: this.remote(p), password: this.metaPassword }, this.clientHeaders(args));
    if (data.is_dir) throw new ObjectNotFound('not a file');
    if (!data.raw_url) throw new Error(`${this.base} gave no raw URL for ${path.posix.basename(p)}`);
    const url = data.raw_url.startsWith('/') ? `${this.base}${data.raw_url}` : data.raw_url;
    return { url };
  }

  /** `/api/fs/other` of the peer (driver-defined methods of the storage behind the path). */
  async other(p: string, method: string, data: unknown): Promise<unknown> {
    return this.call('/api/fs/other', { path: this.remote(p), password: this.metaPassword, method, data });
  }

  async makeDir(parent: string, name: string): Promise<void> {
    await this.call('/api/fs/mkdir', { path: this.remote(path.posix.join(parent, name)) });
  }

  async rename(p: string, newName: string): Promise<void> {
    await this.call('/api/fs/rename', { path: this.remote(p), name: newName });
  }

  async move(src: string, dstDir: string): Promise<void> {
    await this.call('/api/fs/move', { src_dir: this.remote(path.posix.dirname(src)), dst_dir: this.remote(dstDir), names: [path.posix.basename(src)] });
  }

  async copy(src: string, dstDir: string): Promise<void> {
    await this.call('/api/fs/copy', { src_dir: this.remote(path.posix.dirname(src)), dst_dir: this.remote(dstDir), names: [path.posix.basename(src)] });
  }

  async remove(p: string): Promise<void> {
    await this.call('/api/fs/remove', { dir: this.remote(path.posix.dirname(p)), names: [path.posix.basename(p)] });
  }

  /**
   * PUT /api/fs/put needs the size up front: a stream of unknown size is spooled into temp_dir
   * first. Size and declared hashes are checked here as well as by the peer.
   */
  async put(dstDir: string, up: UploadStream): Promise<void> {
    const headers: Record<string, string> = {
      'file-path': encodeURIComponent(this.remote(path.posix.join(dstDir, up.name))),
      password: this.metaPassword,
      overwrite: 'true',
    };
    if (up.modified) headers['last-modified'] = String(up.modified.getTime());
    for (const [h, v] of Object.entries(up.hashes ?? {})) headers[`x-file-${h}`] = v;
    let spooled: string | undefined;
    try {
      let body: Readable;
      let size = up.size;
      if (size < 0) {
        spooled = path.join(this.ctx.tempDir, `alist-put-${process.pid}-${randomBytes(8).toString('hex')}`);
        size = await writeUploadTo(spooled, up);
        body = createReadStream(spooled);
      } else {
        body = pipeline(up.stream, new CheckedStream(up), () => {});
      }
      const send = async () => {
        if (this.token) headers.authorization = this.token;
        return putStream(this.base, headers, size, body);
      };
      const r = await send();
      if (r.code === 401 && this.opts.username && spooled) {
        await this.login();
        body = createReadStream(spooled);
        const again = await send();
        if (again.code !== 200) throw peerFailure(again);
      } else if (r.code !== 200) throw peerFailure(r);
    } finally {
      if (spooled) await rm(spooled, { force: true });
    }
  }
}

export const alistV3Driver = defineDriver(CONFIG, ADDITIONAL, (options, ctx) => new AlistV3Driver(options, ctx));
