import { AbortError, isAbort, isKind } from '../../errors.js';
import path from 'node:path';
import { PassThrough, type Readable, Transform } from 'node:stream';
import type { Client, FileInfo } from 'basic-ftp';
import { lazyRequire } from '../../util/lazy-require.js';
import { splitHostPort } from '../host-port.js';
import { checkSegment, isUploadTemp, ObjectExists, PermissionDenied, RootedPeerDriver, uploadTempName } from '../peer.js';
import {
  defineDriver,
  type Driver,
  ObjectNotFound,
  type Obj,
  type UploadStream,
} from '../types.js';
import { CheckedStream } from '../write-file.js';
import { FtpPool } from './pool.js';
import { ADDITIONAL, CONFIG } from './info.js';

const loadFtp = lazyRequire<typeof import('basic-ftp')>('basic-ftp');

/** Encodings of the control connection Node can speak (GBK and the like would need a converter). */
const ENCODINGS = new Set(['', 'utf8', 'utf-8', 'latin1', 'binary', 'ascii']);

/** An FTP reply as this server's errors (the reply texts of vsftpd, pure-ftpd, ProFTPD, IIS). */
export function ftpError(err: unknown): Error {
  const code = (err as { code?: unknown }).code;
  const message = (err as Error).message ?? String(err);
  if (typeof code !== 'number') return err as Error;
  if (/exists/i.test(message)) return new ObjectExists();
  if (/permission denied|access denied|not allowed|prohibited|read-only/i.test(message)) return new PermissionDenied(message);
  if (code === 550 || code === 450) return new ObjectNotFound();
  return new Error(`the FTP server answered: ${message}`);
}

function toObj(f: FileInfo): Obj {
  const isDir = f.isDirectory;
  return { name: f.name, size: isDir ? 0 : f.size, isDir, modified: f.modifiedAt ?? new Date(0) };
}

/** MLST facts (`type=file;size=3;modify=20240101120000;`) of one path, or undefined when the server has no MLST. */
function parseMlst(message: string): { isDir: boolean; size: number; modified: Date } | undefined {
  const line = message.split('\n').map((l) => l.trim()).find((l) => /(^|;)type=/i.test(l));
  if (!line) return undefined;
  const facts = new Map(
    line
      .split(' ')[0]!
      .split(';')
      .filter(Boolean)
      .map((f) => {
        const i = f.indexOf('=');
        return [f.slice(0, i).toLowerCase(), f.slice(i + 1)] as const;
      }),
  );
  const type = facts.get('type')?.toLowerCase() ?? '';
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})/.exec(facts.get('modify') ?? '');
  return {
    isDir: type === 'dir' || type === 'cdir' || type === 'pdir',
    size: Number(facts.get('size') ?? 0),
    modified: m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) : new Date(0),
  };
}

export class FtpDriver extends RootedPeerDriver implements Driver {
  private readonly pool: FtpPool;
  private mlst = false;

  constructor(opts: Record<string, unknown>) {
    super(opts);
    const encoding = String(opts.encoding ?? '').toLowerCase();
    if (!ENCODINGS.has(encoding)) throw new Error(`encoding ${opts.encoding} is not supported (use utf8 or latin1)`);
    this.pool = new FtpPool(() => this.connect(encoding === '' || encoding === 'utf-8' ? 'utf8' : (encoding as BufferEncoding)));
  }

  private async connect(encoding: BufferEncoding): Promise<Client> {
    const { Client } = loadFtp();
    const client = new Client(30_000);
    client.ftp.encoding = encoding as typeof client.ftp.encoding;
    const { host, port } = splitHostPort(String(this.opts.address), 21);
    try {
      await client.access({ host, port, user: String(this.opts.username), password: String(this.opts.password), secure: false });
    } catch (err) {
      client.close();
      const code = (err as { code?: unknown }).code;
      if (code === 530) throw new PermissionDenied('login incorrect');
      throw err;
    }
    return client;
  }

  /** Runs an FTP operation on a pooled connection (a new one when the old one was lost), peer errors mapped. */
  private async op<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    try {
      return await this.pool.use(fn);
    } catch (err) {
      throw ftpError(err);
    }
  }

  async init(): Promise<void> {
    await this.op(async (c) => {
      const features = await c.features();
      this.mlst = features.has('MLST');
      await c.cd(this.root);
    }).catch((err) => {
      throw isKind(err, 'NotFound') ? new Error(`root folder ${this.root} not found on the server`) : err;
    });
  }

  async drop(): Promise<void> {
    this.pool.close();
  }

  /**
   * A folder's entries: with `cwd_list`, after entering it (`CWD`, then a listing of the current
   * folder, for servers that cannot list a path, or read a non-UTF-8 one wrongly); otherwise the
   * path goes with the listing command (`MLSD <path>` where the server has it, else `LIST`).
   */
  private async listFull(full: string): Promise<FileInfo[]> {
    return this.op(async (c) => {
      if (this.opts.cwd_list) {
        await c.cd(full);
        return c.list();
      }
      const entries = await c.list(full);
      // servers answer a listing of a missing path with nothing: an empty one must be a folder
      if (entries.length > 0) return entries;
      if (!this.mlst) {
        await c.cd(full); // 550 for a missing folder
        return entries;
      }
      const facts = parseMlst((await c.send(`MLST ${full}`)).message);
      if (facts && !facts.isDir) throw new ObjectNotFound('not a folder');
      return entries;
    });
  }

  async list(dir: string): Promise<Obj[]> {
    const entries = await this.listFull(this.p(dir));
    // a name holding `/` is a server's full-path entry (`type=cdir` and the like), never a child
    return entries.filter((f) => f.name !== '.' && f.name !== '..' && !f.name.includes('/') && !isUploadTemp(f.name)).map(toObj);
  }

  async get(rel: string): Promise<Obj> {
    const full = this.p(rel);
    if (full === this.root) return { name: '', size: 0, isDir: true, modified: new Date(0) };
    const name = path.posix.basename(full);
    if (this.mlst) {
      const res = await this.op((c) => c.send(`MLST ${full}`)).catch((err) => {
        if (isKind(err, 'NotFound')) throw err;
        return undefined;
      });
      const facts = res && parseMlst(res.message);
      if (facts) return { name, size: facts.isDir ? 0 : facts.size, isDir: facts.isDir, modified: facts.modified };
    }
    const found = (await this.listFull(path.posix.dirname(full))).find((f) => f.name === name);
    if (!found) throw new ObjectNotFound();
    return toObj(found);
  }

  /**
   * Bytes start..end of a file on a connection of its own (REST + RETR). A range ending before the
   * file does closes that connection once enough has arrived: FTP cannot stop a transfer otherwise.
   */
  protected async openRange(full: string, start: number, end: number): Promise<Readable> {
    const client = await this.pool.acquire();
    let left = end - start + 1;
    let transferDone = false;
    const cut = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        if (left <= 0) return cb();
        const part = chunk.length > left ? chunk.subarray(0, left) : chunk;
        left -= part.length;
        cb(null, part);
        if (left === 0) this.push(null);
      },
    });
    const sink = new PassThrough({ highWaterMark: 1 << 20 });
    sink.pipe(cut);
    client.downloadTo(sink, full, start).then(
      () => {
        transferDone = true;
        this.pool.release(client);
        if (left > 0) cut.destroy(new Error('the file is shorter than when it was listed'));
      },
      (err) => {
        transferDone = true;
        this.pool.discard(client);
        if (left > 0 && !cut.destroyed) cut.destroy(ftpError(err));
      },
    );
    // Range done or reader gone while the transfer still runs: closing the connection stops it.
    cut.once('close', () => {
      if (!transferDone) this.pool.discard(client);
    });
    return cut;
  }

  async makeDir(parent: string, name: string): Promise<void> {
    const full = path.posix.join(this.p(parent), checkSegment(name));
    try {
      await this.op((c) => c.send(`MKD ${full}`));
    } catch (err) {
      if (isKind(err, 'NotFound') && (await this.exists(full))) throw new ObjectExists();
      throw err;
    }
  }

  private async exists(full: string): Promise<boolean> {
    const rel = full.slice(this.root.length) || '/';
    return this.get(rel).then(
      () => true,
      () => false,
    );
  }

  protected async relocate(from: string, to: string): Promise<void> {
    if (await this.exists(to)) throw new ObjectExists();
    await this.op((c) => c.rename(from, to));
  }

  protected async removeBelowRoot(full: string, rel: string): Promise<void> {
    const obj = await this.get(rel);
    await this.op(async (c) => {
      if (obj.isDir) await c.removeDir(full);
      else await c.remove(full);
    });
  }

  /** Uploads under a temporary name in the target folder, then renames it over the target. */
  async put(dstDir: string, up: UploadStream): Promise<void> {
    const dir = this.p(dstDir);
    const target = path.posix.join(dir, checkSegment(up.name));
    const temp = path.posix.join(dir, uploadTempName());
    const client = await this.pool.acquire();
    const checked = new CheckedStream(up);
    const onAbort = () => checked.destroy(new AbortError('context canceled'));
    up.signal?.addEventListener('abort', onAbort, { once: true });
    up.stream.once('error', (err) => checked.destroy(err));
    try {
      const failed = new Promise<never>((_, reject) => checked.once('error', reject));
      failed.catch(() => undefined);
      await Promise.race([client.uploadFrom(up.stream.pipe(checked), temp), failed]);
      try {
        await client.rename(temp, target);
      } catch {
        // Servers that refuse to rename over a file: make way, then rename.
        await client.remove(target, true);
        await client.rename(temp, target);
      }
      this.pool.release(client);
    } catch (err) {
      // The data connection may still be half open: this connection is not reused.
      this.pool.discard(client);
      await this.op((c) => c.remove(temp, true)).catch(() => undefined);
      throw isKind(err, 'Integrity') || isAbort(err) ? err : ftpError(err);
    } finally {
      up.signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** `encoding` is required in the original's form, yet empty means "none": an empty value is fine here. */
const READ_ITEMS = ADDITIONAL.map((it) => (it.name === 'encoding' ? { ...it, required: false } : it));

export const ftpDriver = defineDriver(CONFIG, ADDITIONAL, (options) => new FtpDriver(options), READ_ITEMS);
