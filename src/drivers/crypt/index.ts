import { isKind } from '../../errors.js';
import path from 'node:path';
import { pipeline, Readable } from 'node:stream';
import { cleanPath } from '../../util/paths.js';
import { RemotePathOverlay } from '../overlay.js';
import {
  defineDriver,
  type Driver,
  type DriverContext,
  type FileHandle,
  type Link,
  type LinkArgs,
  type Obj,
  ObjectNotFound,
  type UploadStream,
} from '../types.js';
import { CheckedStream } from '../write-file.js';
import { BLOCK_DATA, type CryptKeys, decryptBlocks, decryptedSize, deriveKeys, EncryptStream, encryptedRange, encryptedSize, HEADER_SIZE, readHeader } from './content.js';
import { type NameEncoding, NameCipher, type NameMode } from './names.js';
import { OBFUSCATED_PREFIX, obscure, reveal } from './obscure.js';
import { ADDITIONAL, CONFIG } from './info.js';

const THUMB_FOLDER = '.thumbnails';

/** A password as configured: plain, or rclone-obscured behind the original's prefix. */
function plainSecret(value: string): string {
  return value.startsWith(OBFUSCATED_PREFIX) ? reveal(value.slice(OBFUSCATED_PREFIX.length)) : value;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * rclone crypt over another mounted path (remote_path): names and contents are encrypted in
 * rclone's format, so the same data can be read and written with `rclone` and a crypt remote.
 */
export class CryptDriver extends RemotePathOverlay implements Driver {
  private keys?: CryptKeys;
  private names?: NameCipher;
  private readonly encryptDirs: boolean;

  constructor(opts: Record<string, unknown>, ctx: DriverContext) {
    super(opts, ctx, 'crypt');
    this.encryptDirs = opts.filename_encryption !== 'off' && opts.directory_name_encryption === 'true';
  }

  private get cipher(): NameCipher {
    if (!this.names) throw new Error('storage not initialised');
    return this.names;
  }

  async init(): Promise<void> {
    this.checkRemoteRoot();
    const encoding = String(this.opts.filename_encoding);
    if (encoding === 'base32768') throw new Error('filename_encoding base32768 is not supported; use base64 or base32');
    const password = plainSecret(String(this.opts.password));
    const salt = plainSecret(String(this.opts.salt ?? ''));
    this.keys = await deriveKeys(password, salt);
    this.names = new NameCipher(this.opts.filename_encryption as NameMode, this.keys.nameKey, this.keys.nameTweak, encoding as NameEncoding, String(this.opts.encrypted_suffix));
    // Stored obscured from now on, as the original does once a storage is saved.
    for (const key of ['password', 'salt']) {
      const v = String(this.opts[key] ?? '');
      if (v !== '' && !v.startsWith(OBFUSCATED_PREFIX)) this.opts[key] = OBFUSCATED_PREFIX + obscure(v);
    }
  }

  private encDir(name: string): string {
    return this.encryptDirs ? this.cipher.encryptSegment(name) : name;
  }

  protected remoteDir(p: string): string {
    const segments = p.split('/').filter(Boolean);
    if (segments.some((s) => s === '.' || s === '..')) throw new ObjectNotFound();
    segments.forEach((s, i) => (segments[i] = this.encDir(s)));
    return cleanPath(path.posix.join(this.remoteRoot, ...segments));
  }

  private remoteFile(p: string): string {
    if (path.posix.basename(p) === '..' || path.posix.basename(p) === '.') throw new ObjectNotFound();
    return cleanPath(path.posix.join(this.remoteDir(path.posix.dirname(p)), this.cipher.encryptFileName(path.posix.basename(p))));
  }

  /** Which remote object stands for `p` (a file first, then a folder). */
  protected async remoteOf(p: string): Promise<{ remote: string; obj: Obj }> {
    const file = this.remoteFile(p);
    try {
      const obj = await this.vfs.get(file);
      if (!obj.isDir) return { remote: file, obj };
    } catch (err) {
      if (!isKind(err, 'NotFound')) throw err;
    }
    const dir = this.remoteDir(p);
    const obj = await this.vfs.get(dir);
    if (!obj.isDir) throw new ObjectNotFound();
    return { remote: dir, obj };
  }

  private hidden(name: string): boolean {
    return this.opts.show_hidden === false && name.startsWith('.');
  }

  /** A remote entry as seen through the cipher; undefined for entries rclone would not show. */
  private decrypt(o: Obj): Obj | undefined {
    try {
      if (o.isDir) {
        const name = this.encryptDirs ? this.cipher.decryptSegment(o.name) : o.name;
        return { ...o, name, hash: undefined };
      }
      const size = decryptedSize(o.size);
      if (size < 0) return undefined;
      return { ...o, name: this.cipher.decryptFileName(o.name), size, hash: undefined, thumb: undefined };
    } catch {
      return undefined;
    }
  }

  async list(p: string): Promise<Obj[]> {
    const remote = this.remoteDir(p);
    const out: Obj[] = [];
    let thumbFolder: string | undefined;
    for (const o of await this.vfs.list(remote)) {
      const plain = this.decrypt(o);
      if (!plain) continue;
      if (plain.isDir && plain.name === THUMB_FOLDER && this.opts.thumbnail) thumbFolder = o.name;
      if (this.hidden(plain.name) || (this.opts.thumbnail && plain.isDir && plain.name === THUMB_FOLDER)) continue;
      out.push(plain);
    }
    if (thumbFolder !== undefined) {
      const thumbs = new Set((await this.vfs.list(path.posix.join(remote, thumbFolder)).catch(() => [])).map((o) => this.decrypt(o)?.name));
      for (const o of out) if (!o.isDir && thumbs.has(`${o.name}.webp`)) o.selfThumb = true;
    }
    return out;
  }

  async get(p: string): Promise<Obj> {
    if (p === '/') {
      const root = await this.vfs.get(this.remoteRoot);
      return { ...root, name: '' };
    }
    const { obj } = await this.remoteOf(p);
    const plain = this.decrypt(obj);
    if (!plain) throw new ObjectNotFound();
    return { ...plain, name: path.posix.basename(p) };
  }

  async link(p: string, args: LinkArgs): Promise<Link> {
    if (args.type === 'thumb') {
      const thumb = path.posix.join(path.posix.dirname(p), THUMB_FOLDER, `${path.posix.basename(p)}.webp`);
      return { file: await this.handle(thumb), contentType: 'image/webp' };
    }
    return { file: await this.handle(p) };
  }

  /** A reader of the plaintext of `p` that decrypts only the blocks a range needs. */
  private async handle(p: string): Promise<FileHandle> {
    const remote = this.remoteFile(p);
    const obj = await this.vfs.get(remote);
    if (obj.isDir) throw new ObjectNotFound('not a file');
    const size = decryptedSize(obj.size);
    if (size < 0) throw new Error(`${path.posix.basename(p)} is not an encrypted file (size ${obj.size})`);
    const dataKey = this.keys!.dataKey;
    return {
      size,
      modified: obj.modified,
      open: async (start, end) => {
        if (size === 0 || end < start) return Readable.from([]);
        const last = Math.min(end, size - 1);
        const nonce = readHeader(await readAll(await this.vfs.open(remote, 0, HEADER_SIZE - 1)));
        const r = encryptedRange(start, last, obj.size);
        const source = await this.vfs.open(remote, r.from, r.to);
        return decryptBlocks(source, dataKey, nonce, r.firstBlock, start - r.firstBlock * BLOCK_DATA, last - start + 1);
      },
    };
  }

  async makeDir(parent: string, name: string): Promise<void> {
    await this.vfs.mkdir(path.posix.join(this.remoteDir(parent), this.encDir(name)));
  }

  async rename(p: string, newName: string): Promise<void> {
    const { remote, obj } = await this.remoteOf(p);
    await this.vfs.rename(remote, obj.isDir ? this.encDir(newName) : this.cipher.encryptFileName(newName));
  }

  async put(dstDir: string, up: UploadStream): Promise<void> {
    // Size and declared hashes are of the plaintext: checked before encryption.
    const encrypted = pipeline(up.stream, new CheckedStream(up), new EncryptStream(this.keys!.dataKey), () => {});
    try {
      await this.vfs.put(this.remoteDir(dstDir), {
        name: this.cipher.encryptFileName(up.name),
        size: up.size >= 0 ? encryptedSize(up.size) : -1,
        stream: encrypted,
        modified: up.modified,
        signal: up.signal,
      });
    } catch (err) {
      encrypted.destroy();
      throw err;
    }
  }
}

export const cryptDriver = defineDriver(CONFIG, ADDITIONAL, (options, ctx) => new CryptDriver(options, ctx));
