import { Readable } from 'node:stream';
import { ReadableStream } from 'node:stream/web';
import type * as Zipjs from '@zip.js/zip.js';
import { BadRequest, Missing, Upstream } from '../errors.js';
import { type ArchiveEntry, safeInnerPath } from './entries.js';
import { type OpenedArchive, under, wrongPassword } from './reader.js';
import type { ByteSource } from './source.js';
import { lazyRequire } from '../util/lazy-require.js';

/** zip.js, loaded when the first zip is opened (most requests never open one). */
const loadZipjs = lazyRequire<typeof Zipjs>('@zip.js/zip.js');
let loaded: { zipjs: typeof Zipjs; RangeReader: ReturnType<typeof rangeReaderClass> } | undefined;
function lib() {
  if (!loaded) {
    const zipjs = loadZipjs();
    zipjs.configure({ useWebWorkers: false });
    loaded = { zipjs, RangeReader: rangeReaderClass(zipjs) };
  }
  return loaded;
}

/** zip.js reads through this: every read is one ranged read of the archive (central directory first). */
const rangeReaderClass = (zipjs: typeof Zipjs) => class RangeReader extends zipjs.Reader<ByteSource> {
  constructor(private readonly source: ByteSource) {
    super(source);
    this.size = source.size;
  }

  override async readUint8Array(index: number, length: number): Promise<Uint8Array> {
    return this.source.read(index, Math.min(length, this.size - index));
  }

  /** An entry's data as one streamed range read (not one read per chunk), with back-pressure. */
  override createReadable(options: Zipjs.CreateReadableOptions = {}): globalThis.ReadableStream<Uint8Array> {
    const offset = options.offset ?? 0;
    const size = options.size ?? this.size - offset;
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
 * A zip read through its central directory, with ranged reads only (no full download on remote
 * storages). Names not flagged UTF-8 are decoded with `encoding` (setting non_efs_zip_encoding).
 */
export async function openZip(source: ByteSource, encoding: string): Promise<OpenedArchive> {
  const { zipjs, RangeReader } = lib();
  const reader = new zipjs.ZipReader(new RangeReader(source), {
    filenameEncoding: encoding || undefined,
    commentEncoding: encoding || undefined,
    // Unsafe names are refused one by one below (safeInnerPath), not by failing the whole archive.
    filenameValidation: 'tolerant',
  });
  const entries: ArchiveEntry[] = [];
  const refused: string[] = [];
  /**
   * Entries are walked with the generator and not kept: zip.js's entry objects cost kilobytes
   * each (a 100 000-entry zip took ~1.7 GB kept, ~170 MB walked). Reading an entry walks the
   * central directory again (ranged reads only) to find it.
   */
  const walk = async (visit: (entry: ArchiveEntry, raw: Zipjs.FileEntry) => Promise<boolean | void>): Promise<void> => {
    for await (const e of reader.getEntriesGenerator()) {
      const p = safeInnerPath(e.filename);
      // Symlink entries (unix mode 0120000 in the external attributes) are never followed or written.
      const isLink = ((e.externalFileAttributes >>> 16) & 0o170000) === 0o120000;
      const entry = p && !isLink ? { path: p, size: e.uncompressedSize, isDir: e.directory, modified: e.lastModDate, encrypted: e.encrypted } : undefined;
      if (!entry) {
        if (visit === list) refused.push(e.filename);
        continue;
      }
      if ((await visit(entry, e as Zipjs.FileEntry)) === false) return;
    }
  };
  const list = async (entry: ArchiveEntry) => {
    entries.push(entry);
  };
  try {
    await walk(list);
  } catch (err) {
    throw new BadRequest(`not a readable zip archive: ${(err as Error).message}`);
  }
  const comment = new TextDecoder().decode(reader.comment);
  const find = async (inner: string): Promise<Zipjs.FileEntry | undefined> => {
    let found: Zipjs.FileEntry | undefined;
    await walk(async (e, raw) => {
      if (e.path !== inner || e.isDir) return;
      found = raw;
      return false;
    });
    return found;
  };

  const read = async (entry: Zipjs.FileEntry, password: string, signal?: AbortSignal): Promise<Readable> => {
    const opts = { password: entry.encrypted ? password : undefined, signal, checkAmount: undefined };
    if (entry.encrypted) {
      if (!password) throw wrongPassword();
      try {
        await entry.getData(new zipjs.Uint8ArrayWriter(), { ...opts, checkPasswordOnly: true });
      } catch (err) {
        throw asKind(err);
      }
    }
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const out = Readable.fromWeb(readable as ReadableStream<Uint8Array>);
    entry.getData(writable, opts).catch((err: unknown) => out.destroy(asKind(err) as Error));
    return out;
  };

  return {
    comment,
    encrypted: entries.some((e) => e.encrypted),
    entries,
    refused,
    async open(inner, password, signal) {
      const entry = await find(inner);
      if (!entry) throw new Missing(`${inner} is not a file in the archive`);
      return read(entry, password, signal);
    },
    async extract(prefix, password, each, signal) {
      await walk(async (e, raw) => {
        if (e.isDir || !under(prefix, e.path)) return;
        signal?.throwIfAborted();
        await each(e, await read(raw, password, signal));
      });
    },
    close: () => reader.close(),
  };
}
