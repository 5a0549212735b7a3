import { spawn } from 'node:child_process';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type TarStream from 'tar-stream';
import { BadRequest, Missing, Upstream } from '../errors.js';
import { type ArchiveEntry, safeInnerPath } from './entries.js';
import { type ArchiveFormat, CODEC_OF, type Codec } from './formats.js';
import type { OpenedArchive } from './reader.js';
import { under } from './reader.js';
import type { ByteSource } from './source.js';
import { lazyRequire } from '../util/lazy-require.js';

/** tar-stream, loaded when the first tar is opened. */
const tar = lazyRequire<typeof TarStream>('tar-stream');

const TOOL: Record<Exclude<Codec, 'none' | 'gzip'>, string> = { bzip2: 'bzip2', xz: 'xz', zstd: 'zstd' };

/** The decompressed bytes of a stream: zlib for gzip, the Debian tool (`-dc`, stdin to stdout) otherwise. */
function decompress(input: Readable, codec: Codec): Readable {
  if (codec === 'none') return input;
  if (codec === 'gzip') {
    const gunzip = createGunzip();
    input.on('error', (err) => gunzip.destroy(err));
    return input.pipe(gunzip);
  }
  const child = spawn(TOOL[codec], ['-dc'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const out = new PassThrough();
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-500)));
  input.on('error', (err) => out.destroy(err));
  child.stdin.on('error', () => {});
  input.pipe(child.stdin);
  child.stdout.pipe(out, { end: false });
  child.on('close', (code) => {
    if (code === 0) out.end();
    else out.destroy(new BadRequest(`not a readable ${codec} stream: ${stderr.trim() || `exit ${code}`}`));
  });
  out.on('close', () => {
    input.destroy();
    if (child.exitCode === null) child.kill();
  });
  return out;
}

/** The file a single compressed file (`notes.txt.gz`) holds: its name minus the suffix. */
const innerName = (archiveName: string) => archiveName.replace(/\.(gz|bz2|xz|zst)$/i, '') || 'data';

type Visit = (entry: ArchiveEntry, body: Readable) => Promise<void>;

/** Thrown to end a walk early once the wanted entry was read. */
const DONE = new Error('entry read');

/** One pass over a tar stream: every header and body in order; entries with unsafe names are refused. */
async function walkTar(input: Readable, visit: Visit, refused?: string[]): Promise<void> {
  const extract = tar().extract();
  const done = pipeline(input, extract).catch((err: unknown) => {
    throw err === DONE || (err instanceof Error && 'kind' in err) ? err : new BadRequest(`not a readable tar archive: ${(err as Error).message}`);
  });
  const walking = (async () => {
    for await (const e of extract) {
      const h = e.header;
      const p = safeInnerPath(h.name);
      const kind = h.type === 'directory' ? 'dir' : h.type === 'file' || h.type === 'contiguous-file' ? 'file' : 'other';
      if (!p || kind === 'other') {
        // Links, devices and unsafe names are never written (zip-slip).
        if (kind !== 'other' || h.type === 'symlink' || h.type === 'link') refused?.push(h.name);
        e.resume();
        continue;
      }
      await visit({ path: p, size: kind === 'dir' ? 0 : (h.size ?? 0), isDir: kind === 'dir', modified: h.mtime?.getTime() ?? 0, encrypted: false }, e as unknown as Readable);
    }
  })().catch((err: unknown) => {
    extract.destroy(err as Error);
    throw err;
  });
  await Promise.all([done, walking]);
}

/**
 * tar (plain or compressed) and single compressed files: read in one pass from the start of the
 * archive, so a listing reads the whole archive once (then the listing is cached), and opening
 * one entry reads up to it.
 */
export async function openStreamed(source: ByteSource, format: Exclude<ArchiveFormat, 'zip' | '7z' | 'rar'>, archiveName: string, modified: Date): Promise<OpenedArchive> {
  const codec = CODEC_OF[format];
  const single = !format.startsWith('tar');
  const name = innerName(path.posix.basename(archiveName));
  const body = async () => decompress(await source.all(), codec);

  const entries: ArchiveEntry[] = [];
  const refused: string[] = [];
  if (single) {
    entries.push({ path: `/${name}`, size: 0, isDir: false, modified: modified.getTime(), encrypted: false });
  } else {
    await walkTar(await body(), async (e, b) => {
      entries.push(e);
      b.resume();
      await new Promise((r) => b.once('end', r));
    }, refused);
  }

  const each = async (prefix: string, visit: Visit, signal?: AbortSignal) => {
    if (single) {
      if (under(prefix, `/${name}`)) await visit(entries[0]!, await body());
      return;
    }
    await walkTar(await body(), async (e, b) => {
      signal?.throwIfAborted();
      if (e.isDir || !under(prefix, e.path)) {
        b.resume();
        return;
      }
      await visit(e, b);
    });
  };

  return {
    comment: '',
    encrypted: false,
    entries,
    count: entries.length,
    refused,
    async open(inner, _password, signal) {
      if (!entries.some((e) => e.path === inner && !e.isDir)) throw new Missing(`${inner} is not a file in the archive`);
      const out = new PassThrough();
      let found = false;
      // The walk goes on in the background, feeding `out` once it reaches the entry, and stops
      // reading the archive right after it.
      each(inner, async (_e, b) => {
        found = true;
        await pipeline(b, out);
        throw DONE;
      }, signal).then(
        () => {
          if (!found) out.destroy(new Upstream(`${inner} was not found when reading the archive`));
        },
        (err: unknown) => {
          if (err !== DONE) out.destroy(err as Error);
        },
      );
      return out;
    },
    extract: (prefix, _password, visit, signal) => each(prefix, visit, signal),
    close: async () => {},
  };
}
