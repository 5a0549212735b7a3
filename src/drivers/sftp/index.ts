import { isKind } from '../../errors.js';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Client, SFTPWrapper, Stats } from 'ssh2';
import { lazyRequire } from '../../util/lazy-require.js';
import { checkSegment, isUploadTemp, ObjectExists, PermissionDenied, Reconnecting, RootedPeerDriver, uploadTempName } from '../peer.js';
import {
  defineDriver,
  type Driver,
  ObjectNotFound,
  type Obj,
  type UploadStream,
} from '../types.js';
import { CheckedStream } from '../write-file.js';
import { splitHostPort } from '../host-port.js';
import { ADDITIONAL, CONFIG } from './info.js';

const loadSsh2 = lazyRequire<typeof import('ssh2')>('ssh2');

/** SFTP status codes (draft-ietf-secsh-filexfer-02). */
const NO_SUCH_FILE = 2;
const PERMISSION_DENIED = 3;
const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

/** Reads kept in flight by a download: SFTP answers each read in turn, so one at a time leaves the link idle. */
const READ_DEPTH = 16;
const READ_CHUNK = 255 * 1024;

interface Session {
  client: Client;
  sftp: SFTPWrapper;
}

const call = <T>(fn: (cb: (err: Error | undefined | null, v: T) => void) => void): Promise<T> =>
  new Promise((resolve, reject) => fn((err, v) => (err ? reject(err) : resolve(v))));

/** A peer's status as this server's errors; anything without an SFTP status code is a connection problem. */
function sftpError(err: unknown): Error {
  const code = (err as { code?: unknown }).code;
  if (code === NO_SUCH_FILE) return new ObjectNotFound();
  if (code === PERMISSION_DENIED) return new PermissionDenied((err as Error).message);
  return err as Error;
}

const isConnectionError = (err: unknown) => typeof (err as { code?: unknown }).code !== 'number';

function toObj(name: string, a: Stats): Obj {
  const isDir = (a.mode & S_IFMT) === S_IFDIR;
  return { name, size: isDir ? 0 : a.size, isDir, modified: new Date(a.mtime * 1000) };
}

export class SftpDriver extends RootedPeerDriver implements Driver {
  private readonly conn: Reconnecting<Session>;

  constructor(opts: Record<string, unknown>) {
    super(opts);
    this.conn = new Reconnecting<Session>(() => this.connect(), (s) => s.client.end(), isConnectionError);
  }

  private async connect(): Promise<Session> {
    const { Client } = loadSsh2();
    const { host, port } = splitHostPort(String(this.opts.address), 22);
    const client = new Client();
    const ready = new Promise<void>((resolve, reject) => {
      client.once('ready', resolve);
      client.once('error', reject);
    });
    client.connect({
      host,
      port,
      username: String(this.opts.username),
      password: String(this.opts.password) || undefined,
      privateKey: String(this.opts.private_key) || undefined,
      passphrase: String(this.opts.passphrase) || undefined,
      readyTimeout: 15_000,
      keepaliveInterval: 15_000,
      keepaliveCountMax: 3,
    });
    // READ requests and window adjustments are small packets sent while data flows the other
    // way: with Nagle's algorithm they waited for the peer's delayed ACKs, leaving the server
    // idle between replies (a download ran at about a third of rclone's, which sets TCP_NODELAY).
    client.setNoDelay(true);
    await ready;
    const sftp = await call<SFTPWrapper>((cb) => client.sftp(cb)).catch((err) => {
      client.end();
      throw err;
    });
    const session = { client, sftp };
    client.on('error', () => this.conn.invalidate(session));
    client.on('close', () => this.conn.invalidate(session));
    return session;
  }

  /** Runs an SFTP call, reconnecting once when the connection was lost, with the peer's errors mapped. */
  private async op<T>(fn: (sftp: SFTPWrapper) => Promise<T>): Promise<T> {
    try {
      return await this.conn.use((s) => fn(s.sftp));
    } catch (err) {
      throw sftpError(err);
    }
  }

  async init(): Promise<void> {
    const st = await this.op((sftp) => call<Stats>((cb) => sftp.stat(this.root, cb))).catch((err) => {
      throw isKind(err, 'NotFound') ? new Error(`root folder ${this.root} not found on the server`) : err;
    });
    if ((st.mode & S_IFMT) !== S_IFDIR) throw new Error(`root folder ${this.root} is not a folder`);
  }

  async drop(): Promise<void> {
    await this.conn.end();
  }

  async list(dir: string): Promise<Obj[]> {
    const full = this.p(dir);
    const entries = await this.op((sftp) => call<Array<{ filename: string; attrs: Stats }>>((cb) => sftp.readdir(full, cb)));
    const out: Obj[] = [];
    for (const e of entries) {
      if (e.filename === '.' || e.filename === '..' || isUploadTemp(e.filename)) continue;
      let attrs = e.attrs;
      if ((attrs.mode & S_IFMT) === S_IFLNK) {
        try {
          attrs = await this.op((sftp) => call<Stats>((cb) => sftp.stat(path.posix.join(full, e.filename), cb)));
        } catch (err) {
          if (this.opts.ignore_symlink_error) continue;
          throw err;
        }
      }
      out.push(toObj(e.filename, attrs));
    }
    return out;
  }

  async get(rel: string): Promise<Obj> {
    const full = this.p(rel);
    const st = await this.op((sftp) => call<Stats>((cb) => sftp.stat(full, cb)));
    return toObj(rel === '/' ? '' : path.posix.basename(full), st);
  }

  /** A stream of bytes start..end (inclusive) on a session of its own, with several reads in flight. */
  protected async openRange(full: string, start: number, end: number): Promise<Readable> {
    const { sftp, handle } = await this.op(async (sftp) => ({ sftp, handle: await call<Buffer>((cb) => sftp.open(full, 'r', cb)) }));
    const readAt = async (pos: number, len: number): Promise<Buffer> => {
      const buf = Buffer.allocUnsafe(len);
      let got = 0;
      while (got < len) {
        const n = await new Promise<number>((resolve, reject) =>
          sftp.read(handle, buf, got, len - got, pos + got, (err, bytes) => (err ? reject(err) : resolve(bytes))),
        );
        if (n === 0) throw new Error('the file is shorter than when it was listed');
        got += n;
      }
      return buf;
    };
    let next = start;
    const queue: Array<Promise<Buffer>> = [];
    const fill = () => {
      while (queue.length < READ_DEPTH && next <= end) {
        const len = Math.min(READ_CHUNK, end - next + 1);
        const p = readAt(next, len);
        p.catch(() => undefined);
        queue.push(p);
        next += len;
      }
    };
    const close = () => sftp.close(handle, () => undefined);
    return new Readable({
      highWaterMark: READ_CHUNK * 4,
      read() {
        fill();
        const head = queue.shift();
        if (!head) {
          close();
          this.push(null);
          return;
        }
        head.then(
          (buf) => this.push(buf),
          (err) => this.destroy(sftpError(err)),
        );
      },
      destroy(err, cb) {
        close();
        cb(err);
      },
    });
  }

  async makeDir(parent: string, name: string): Promise<void> {
    const full = path.posix.join(this.p(parent), checkSegment(name));
    try {
      await this.op((sftp) => call<void>((cb) => sftp.mkdir(full, cb)));
    } catch (err) {
      // OpenSSH answers a plain FAILURE when the name is taken.
      if (await this.exists(full)) throw new ObjectExists();
      throw err;
    }
  }

  private async exists(full: string): Promise<boolean> {
    return this.op((sftp) => call<Stats>((cb) => sftp.stat(full, cb))).then(
      () => true,
      () => false,
    );
  }

  protected async relocate(from: string, to: string): Promise<void> {
    if (await this.exists(to)) throw new ObjectExists();
    await this.op((sftp) => call<void>((cb) => sftp.rename(from, to, cb)));
  }

  protected async removeBelowRoot(full: string): Promise<void> {
    await this.removeTree(full);
  }

  private async removeTree(full: string): Promise<void> {
    const st = await this.op((sftp) => call<Stats>((cb) => sftp.lstat(full, cb)));
    if ((st.mode & S_IFMT) !== S_IFDIR) {
      await this.op((sftp) => call<void>((cb) => sftp.unlink(full, cb)));
      return;
    }
    const entries = await this.op((sftp) => call<Array<{ filename: string }>>((cb) => sftp.readdir(full, cb)));
    for (const e of entries) {
      if (e.filename !== '.' && e.filename !== '..') await this.removeTree(path.posix.join(full, e.filename));
    }
    await this.op((sftp) => call<void>((cb) => sftp.rmdir(full, cb)));
  }

  /** Writes a temporary file next to the target, then renames it over the target (POSIX rename where offered). */
  async put(dstDir: string, up: UploadStream): Promise<void> {
    const dir = this.p(dstDir);
    const target = path.posix.join(dir, checkSegment(up.name));
    const temp = path.posix.join(dir, uploadTempName());
    // Checking the folder also brings back a lost connection before the body starts flowing.
    const sftp = await this.op(async (sftp) => {
      await call<Stats>((cb) => sftp.stat(dir, cb));
      return sftp;
    });
    try {
      const out: Writable = sftp.createWriteStream(temp, { flags: 'w', mode: 0o644 });
      await pipeline(up.stream, new CheckedStream(up), out, { signal: up.signal });
      if (up.modified) {
        const t = up.modified.getTime() / 1000;
        await call<void>((cb) => sftp.utimes(temp, t, t, cb)).catch(() => undefined);
      }
      await this.replace(sftp, temp, target);
    } catch (err) {
      await call<void>((cb) => sftp.unlink(temp, cb)).catch(() => undefined);
      throw sftpError(err);
    }
  }

  private async replace(sftp: SFTPWrapper, temp: string, target: string): Promise<void> {
    try {
      await call<void>((cb) => sftp.ext_openssh_rename(temp, target, cb));
      return;
    } catch (err) {
      if (typeof (err as { code?: unknown }).code === 'number') throw err;
      // No posix-rename extension: plain rename, which refuses an existing target.
    }
    await call<void>((cb) => sftp.unlink(target, cb)).catch(() => undefined);
    await call<void>((cb) => sftp.rename(temp, target, cb));
  }
}

export const sftpDriver = defineDriver(CONFIG, ADDITIONAL, (options) => new SftpDriver(options));
