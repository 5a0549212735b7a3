import { PassThrough, pipeline, Readable, Transform } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import { createInflateRaw, crc32 } from 'node:zlib';
import type * as Zipjs from '@zip.js/zip.js';
import { Missing, Upstream } from '../errors.js';
import { type ArchiveEntry, safeInnerPath } from './entries.js';
import { type OpenedArchive, under, wrongPassword } from './reader.js';
import type { ByteSource } from './source.js';
import { ByteStrings, type Column, f64, u32, u8 } from './compact.js';
import { asBuffer, readZipDirectory, type ZipRecord } from './zip-directory.js';
import { lazyRequire } from '../util/lazy-require.js';

/** zip.js, loaded when the first encrypted entry is read (most requests never need it). */
const loadZipjs = lazyRequire<typeof Zipjs>('@zip.js/zip.js');
let loaded: { zipjs: typeof Zipjs; OneEntryReader: ReturnType<typeof oneEntryReaderClass> } | undefined;
function lib() {
  if (!loaded) {
    const zipjs = loadZipjs();
    zipjs.configure({ useWebWorkers: false });
    loaded = { zipjs, OneEntryReader: oneEntryReaderClass(zipjs) };
  }
  return loaded;
}

/** What a zip entry keeps besides its listing fields: where and how its bytes are stored. */
interface ZipEntry extends ArchiveEntry {
  method: number;
  crc: number;
  compressedSize: number;
  localOffset: number;
  cdOffset: number;
  cdLength: number;
}

const LOCAL_HEADER = 0x04034b50;

/**
 * The archive as zip.js sees it to read one entry: the real bytes, then a central directory of
 * that one entry (its record as stored) and a zip64 end record pointing at it. zip.js then reads
 * the entry's local header and data from the real bytes by ranges, and never the whole directory.
 */
const oneEntryReaderClass = (zipjs: typeof Zipjs) => class OneEntryReader extends zipjs.Reader<ByteSource> {
  private readonly tail: Buffer;
  constructor(
    private readonly source: ByteSource,
    record: Buffer,
  ) {
    super(source);
    const at = source.size;
    const z64 = Buffer.alloc(56);
    z64.writeUInt32LE(0x06064b50, 0);
    z64.writeBigUInt64LE(44n, 4);
    z64.writeUInt16LE(45, 12);
    z64.writeUInt16LE(45, 14);
    z64.writeBigUInt64LE(1n, 24);
    z64.writeBigUInt64LE(1n, 32);
    z64.writeBigUInt64LE(BigInt(record.length), 40);
    z64.writeBigUInt64LE(BigInt(at), 48);
    const locator = Buffer.alloc(20);
    locator.writeUInt32LE(0x07064b50, 0);
    locator.writeBigUInt64LE(BigInt(at + record.length), 8);
    locator.writeUInt32LE(1, 16);
    const eocd = Buffer.alloc(22);
    eocd.writeUInt32LE(0x06054b50, 0);
    eocd.writeUInt16LE(0xffff, 8);
    eocd.writeUInt16LE(0xffff, 10);
    eocd.writeUInt32LE(0xffffffff, 12);
    eocd.writeUInt32LE(0xffffffff, 16);
    this.tail = Buffer.concat([record, z64, locator, eocd]);
    this.size = at + this.tail.length;
  }

  override async readUint8Array(index: number, length: number): Promise<Uint8Array> {
    const real = this.source.size;
    const end = Math.min(index + length, this.size);
    if (index >= real) return this.tail.subarray(index - real, end - real);
    if (end <= real) return this.source.read(index, end - index);
    return Buffer.concat([asBuffer(await this.source.read(index, real - index)), this.tail.subarray(0, end - real)]);
  }

  /** An entry's data as one streamed range read (not one read per chunk), with back-pressure. */
  override createReadable(options: Zipjs.CreateReadableOptions = {}): globalThis.ReadableStream<Uint8Array> {
    const offset = options.offset ?? 0;
    const size = options.size ?? this.source.size - offset;
    const source = this.source;
    let chunks: AsyncIterator<Buffer> | undefined;
    return new globalThis.ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (size <= 0) return controller.close();
          chunks ??= (await source.stream(offset, offset + size - 1))[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
          const next = await chunks.next();
          if (next.done) controller.close();
          else controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.length));
        },
        async cancel() {
          await chunks?.return?.();
        },
      },
      { highWaterMark: 1 },
    );
  }
};

/** zip.js failures as kinds: a missing or wrong password answers 202, a damaged archive 500 with its text. */
function asKind(err: unknown): unknown {
  const msg = (err as Error)?.message;
  const { zipjs } = lib();
  if (msg === zipjs.ERR_INVALID_PASSWORD || msg === zipjs.ERR_ENCRYPTED) return wrongPassword();
  if (err instanceof Error && !(err as { kind?: string }).kind) return new Upstream(`reading the zip failed: ${msg}`);
  return err;
}

/**
 * ZipCrypto entries up to this size (compressed) are decoded once and their CRC-32 checked before
 * they are answered, so a wrong password that passed the one-byte header check is still a 202.
 */
const ZIPCRYPTO_VERIFIED_BYTES = 16 * 1024 * 1024;

/** What zip.js raises when an entry decrypted with a wrong key (it tries password candidates on the same three). */
function looksLikeWrongKey(err: unknown): boolean {
  const { zipjs } = lib();
  const msg = (err as Error)?.message;
  return msg === zipjs.ERR_INVALID_CRC32 || msg === zipjs.ERR_INVALID_COMPRESSED_DATA || msg === zipjs.ERR_INVALID_UNCOMPRESSED_SIZE;
}

/** Checks the bytes that pass against the entry's size and CRC-32 from the directory. */
function checked(e: ZipEntry): Transform {
  let crc = 0;
  let n = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      crc = crc32(chunk, crc);
      n += chunk.length;
      cb(null, chunk);
    },
    flush(cb) {
      cb(n !== e.size || crc !== e.crc ? new Upstream(`the zip entry ${e.path} is damaged (size or CRC-32 does not match)`) : null);
    },
  });
}

/**
 * A stored or deflated entry without encryption, read with Node's zlib: its local header (for
 * where the data starts), then the data as one ranged read, inflated and checked.
 */
async function plainEntry(source: ByteSource, e: ZipEntry): Promise<Readable> {
  const head = asBuffer(await source.read(e.localOffset, 30));
  if (head.readUInt32LE(0) !== LOCAL_HEADER) throw new Upstream(`the zip entry ${e.path} has no local header where the directory says`);
  const start = e.localOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
  const raw = e.compressedSize > 0 ? await source.stream(start, start + e.compressedSize - 1) : Readable.from([]);
  const out = new PassThrough();
  const streams: NodeJS.ReadWriteStream[] = e.method === 8 ? [createInflateRaw({ chunkSize: 256 * 1024 }), checked(e), out] : [checked(e), out];
  pipeline([raw, ...streams], (err) => {
    if (err && !out.destroyed) out.destroy(err.name === 'Error' && (err as NodeJS.ErrnoException).code?.startsWith('Z_') ? new Upstream(`the zip entry ${e.path} is damaged: ${err.message}`) : err);
  });
  return out;
}

/**
 * A zip read through its central directory, with ranged reads only (no full download on remote
 * storages). Names not flagged UTF-8 are decoded with `encoding` (setting non_efs_zip_encoding).
 */
/**
 * The entries of a zip as compact records: paths as UTF-8 in one buffer, everything else in
 * typed arrays (about 60 bytes an entry besides the path, off the JavaScript heap); entry
 * objects are made as they are read.
 */
class ZipIndex {
  readonly paths: ByteStrings;
  private readonly size: Column<Float64Array>;
  private readonly compressedSize: Column<Float64Array>;
  private readonly localOffset: Column<Float64Array>;
  private readonly cdOffset: Column<Float64Array>;
  private readonly modified: Column<Float64Array>;
  private readonly crc: Column<Uint32Array>;
  private readonly cdLength: Column<Uint32Array>;
  private readonly method: Column<Uint32Array>;
  /** 1: folder, 2: encrypted. */
  private readonly bits: Column<Uint8Array>;

  constructor(expected: number) {
    const n = Math.max(16, Math.min(expected, 1 << 20));
    this.paths = new ByteStrings(n);
    this.size = f64(n);
    this.compressedSize = f64(n);
    this.localOffset = f64(n);
    this.cdOffset = f64(n);
    this.modified = f64(n);
    this.crc = u32(n);
    this.cdLength = u32(n);
    this.method = u32(n);
    this.bits = u8(n);
  }

  get length(): number {
    return this.paths.length;
  }

  push(path: string, isDir: boolean, r: Readonly<ZipRecord>): void {
    const i = this.paths.push(path);
    this.size.set(i, r.size);
    this.compressedSize.set(i, r.compressedSize);
    this.localOffset.set(i, r.localOffset);
    this.cdOffset.set(i, r.cdOffset);
    this.modified.set(i, r.modified);
    this.crc.set(i, r.crc);
    this.cdLength.set(i, r.cdLength);
    this.method.set(i, r.method);
    this.bits.set(i, (isDir ? 1 : 0) | (r.flags & 1 ? 2 : 0));
  }

  isDir(i: number): boolean {
    return (this.bits.data[i]! & 1) !== 0;
  }

  at(i: number): ZipEntry {
    return {
      path: this.paths.get(i),
      size: this.size.data[i]!,
      isDir: this.isDir(i),
      modified: this.modified.data[i]!,
      encrypted: (this.bits.data[i]! & 2) !== 0,
      method: this.method.data[i]!,
      crc: this.crc.data[i]!,
      compressedSize: this.compressedSize.data[i]!,
      localOffset: this.localOffset.data[i]!,
      cdOffset: this.cdOffset.data[i]!,
      cdLength: this.cdLength.data[i]!,
    };
  }

  *[Symbol.iterator](): Generator<ZipEntry> {
    for (let i = 0; i < this.paths.length; i++) yield this.at(i);
  }
}

/**
 * A zip read through its central directory, with ranged reads only (no full download on remote
 * storages). Names not flagged UTF-8 are decoded with `encoding` (setting non_efs_zip_encoding).
 */
export async function openZip(source: ByteSource, encoding: string, checkEntries: (n: number) => void): Promise<OpenedArchive> {
  const dir = await readZipDirectory(source, encoding);
  // Refused before reading the directory when the archive says it holds too many (archive_max_entries).
  checkEntries(dir.entries);
  const index = new ZipIndex(dir.entries);
  const refused: string[] = [];
  let encrypted = false;
  await dir.walk((r) => {
    const p = safeInnerPath(r.name);
    // Symlink entries (unix mode 0120000 in the external attributes) are never followed or written.
    const isLink = ((r.externalAttributes >>> 16) & 0o170000) === 0o120000;
    if (!p || isLink) {
      refused.push(r.name);
      return;
    }
    const isDir = r.name.endsWith('/') || r.name.endsWith('\\') || ((r.externalAttributes & 0x10) !== 0 && r.size === 0);
    index.push(p, isDir, r);
    if (r.flags & 1) encrypted = true;
  });

  /** Through zip.js: encrypted entries (ZipCrypto, AES) and methods other than store and deflate. */
  const viaZipjs = async (e: ZipEntry, password: string, signal?: AbortSignal): Promise<Readable> => {
    if (e.encrypted && !password) throw wrongPassword();
    const { zipjs, OneEntryReader } = lib();
    const record = asBuffer(await source.read(e.cdOffset, e.cdLength));
    const reader = new zipjs.ZipReader(new OneEntryReader(source, record), { filenameValidation: 'tolerant' });
    let entry: Zipjs.FileEntry;
    try {
      const [first] = await reader.getEntries();
      if (!first || first.directory) throw new Upstream(`the zip entry ${e.path} could not be read`);
      entry = first as Zipjs.FileEntry;
      const opts = { password: e.encrypted ? password : undefined, signal, checkAmount: undefined };
      if (e.encrypted) await entry.getData(new zipjs.Uint8ArrayWriter(), { ...opts, checkPasswordOnly: true });
      // ZipCrypto checks a password against one byte of the entry's header: a wrong one passes
      // once in 256 tries and decrypts to garbage. The entry's CRC-32 settles it: decoded once
      // beforehand when it is small, checked at the end of the answer otherwise.
      const zipCrypto = e.encrypted && entry.zipCrypto;
      if (zipCrypto && entry.compressedSize <= ZIPCRYPTO_VERIFIED_BYTES) {
        await entry.getData(new WritableStream<Uint8Array>(), { ...opts, checkCrc32: true }).catch((err: unknown) => {
          throw looksLikeWrongKey(err) ? wrongPassword() : err;
        });
      }
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
      const out = Readable.fromWeb(readable as ReadableStream<Uint8Array>);
      entry.getData(writable, { ...opts, checkCrc32: zipCrypto || undefined }).catch((err: unknown) => out.destroy(asKind(err) as Error));
      return out;
    } catch (err) {
      throw asKind(err);
    }
  };
  const read = (e: ZipEntry, password: string, signal?: AbortSignal): Promise<Readable> =>
    !e.encrypted && (e.method === 0 || e.method === 8) ? plainEntry(source, e) : viaZipjs(e, password, signal);

  return {
    comment: dir.comment,
    encrypted,
    entries: index,
    count: index.length,
    refused,
    async open(inner, password, signal) {
      const wanted = Buffer.from(inner);
      let i = 0;
      while (i < index.length && (index.isDir(i) || !index.paths.equals(i, wanted))) i++;
      if (i === index.length) throw new Missing(`${inner} is not a file in the archive`);
      return read(index.at(i), password, signal);
    },
    async extract(prefix, password, each, signal) {
      for (let i = 0; i < index.length; i++) {
        if (index.isDir(i) || !under(prefix, index.paths.get(i))) continue;
        signal?.throwIfAborted();
        const e = index.at(i);
        await each(e, await read(e, password, signal));
      }
    },
    close: async () => {},
  };
}
