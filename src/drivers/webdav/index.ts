import { isKind } from '../../errors.js';
import { Agent as HttpsAgent } from 'node:https';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { FileStat, WebDAVClient } from 'webdav';
import { checkSegment, isUploadTemp, ObjectExists, PermissionDenied, RootedPeerDriver, uploadTempName } from '../peer.js';
import {
  defineDriver,
  type Driver,
  ObjectNotFound,
  type Obj,
  type UploadStream,
} from '../types.js';
import { CheckedStream } from '../write-file.js';
import { ADDITIONAL, CONFIG } from './info.js';

let webdavModule: Promise<typeof import('webdav')> | undefined;
const loadWebdav = () => (webdavModule ??= import('webdav'));

/** A WebDAV status as this server's errors. */
function davError(err: unknown): Error {
  const status = (err as { status?: number; response?: { status?: number } }).status ?? (err as { response?: { status?: number } }).response?.status;
  if (status === 404 || status === 409) return new ObjectNotFound();
  if (status === 401 || status === 403) return new PermissionDenied(`HTTP ${status}`);
  if (status === 405 || status === 412) return new ObjectExists();
  if (status) return new Error(`the WebDAV server answered HTTP ${status}`);
  return err instanceof Error ? err : new Error(String(err));
}

function toObj(f: FileStat): Obj {
  const isDir = f.type === 'directory';
  const modified = f.lastmod ? new Date(f.lastmod) : new Date(0);
  return { name: f.basename, size: isDir ? 0 : f.size, isDir, modified: Number.isNaN(modified.getTime()) ? new Date(0) : modified };
}

export class WebDavDriver extends RootedPeerDriver implements Driver {
  private client!: WebDAVClient;
  private readonly base: string;
  private readonly agent?: HttpsAgent;

  constructor(opts: Record<string, unknown>) {
    super(opts);
    this.base = String(opts.address).replace(/\/+$/, '');
    if (opts.tls_insecure_skip_verify) this.agent = new HttpsAgent({ rejectUnauthorized: false, keepAlive: true });
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw davError(err);
    }
  }

  async init(): Promise<void> {
    if (this.opts.vendor === 'sharepoint') throw new Error('the sharepoint vendor (SharePoint Online sign-in) is not supported; use other');
    if (!/^https?:\/\//i.test(this.base)) throw new Error('address must be an http:// or https:// URL');
    const { createClient } = await loadWebdav();
    this.client = createClient(this.base, { username: String(this.opts.username), password: String(this.opts.password), httpsAgent: this.agent });
    const root = await this.call(() => this.client.stat(this.root) as Promise<FileStat>).catch((err) => {
      throw isKind(err, 'NotFound') ? new Error(`root folder ${this.root} not found on the server`) : err;
    });
    if (root.type !== 'directory') throw new Error(`root folder ${this.root} is not a folder`);
  }

  async drop(): Promise<void> {
    this.agent?.destroy();
  }

  async list(dir: string): Promise<Obj[]> {
    const items = await this.call(() => this.client.getDirectoryContents(this.p(dir)) as Promise<FileStat[]>);
    return items.filter((f) => !isUploadTemp(f.basename)).map(toObj);
  }

  async get(rel: string): Promise<Obj> {
    const st = await this.call(() => this.client.stat(this.p(rel)) as Promise<FileStat>);
    return { ...toObj(st), name: rel === '/' ? '' : path.posix.basename(this.p(rel)) };
  }

  protected async openRange(full: string, start: number, end: number): Promise<Readable> {
    const url = this.client.getFileDownloadLink(full);
    const auth = Buffer.from(`${this.opts.username}:${this.opts.password}`).toString('base64');
    // The download link carries the credentials in its authority; fetch wants them in a header.
    const u = new URL(url);
    u.username = '';
    u.password = '';
    const res = await fetch(u, { headers: { authorization: `Basic ${auth}`, range: `bytes=${start}-${end}` } });
    if (res.status !== 206 && !(res.status === 200 && start === 0)) {
      await res.body?.cancel();
      throw davError({ status: res.status === 200 ? 416 : res.status });
    }
    if (!res.body) throw new Error('the WebDAV server sent no body');
    return Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
  }

  async makeDir(parent: string, name: string): Promise<void> {
    await this.call(() => this.client.createDirectory(path.posix.join(this.p(parent), checkSegment(name))));
  }

  /** MOVE onto a free name: an existing target is refused. */
  protected async relocate(from: string, to: string): Promise<void> {
    await this.call(() => this.client.moveFile(from, to, { overwrite: false }));
  }

  async copy(src: string, dstDir: string): Promise<void> {
    const [from, to] = this.moveTarget(src, dstDir);
    await this.call(() => this.client.copyFile(from, to, { overwrite: false }));
  }

  protected async removeBelowRoot(full: string): Promise<void> {
    await this.call(() => this.client.deleteFile(full));
  }

  /** PUTs under a temporary name in the target folder, then MOVEs it over the target. */
  async put(dstDir: string, up: UploadStream): Promise<void> {
    const dir = this.p(dstDir);
    const target = path.posix.join(dir, checkSegment(up.name));
    const temp = path.posix.join(dir, uploadTempName());
    const checked = new CheckedStream(up);
    const controller = new AbortController();
    const stop = () => controller.abort();
    up.signal?.addEventListener('abort', stop, { once: true });
    up.stream.once('error', (err) => checked.destroy(err));
    let bodyError: Error | undefined;
    checked.once('error', (err) => {
      bodyError = err;
      stop();
    });
    try {
      await this.call(() =>
        this.client.putFileContents(temp, up.stream.pipe(checked), {
          contentLength: up.size >= 0 ? up.size : false,
          overwrite: true,
          signal: controller.signal,
        }),
      ).catch((err) => {
        throw bodyError ?? err;
      });
      if (bodyError) throw bodyError;
      await this.call(() => this.client.moveFile(temp, target, { overwrite: true }));
    } catch (err) {
      await this.client.deleteFile(temp).catch(() => undefined);
      throw err;
    } finally {
      up.signal?.removeEventListener('abort', stop);
    }
  }
}

export const webdavDriver = defineDriver(CONFIG, ADDITIONAL, (options) => new WebDavDriver(options));
