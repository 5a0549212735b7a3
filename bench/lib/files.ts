import { randomBytes } from 'node:crypto';
import { createReadStream, readdirSync, statSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Creates `count` small files `f0000001.txt`… in `dir` (concurrency-limited). */
export async function createSmallFiles(dir: string, count: number, signal?: AbortSignal): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  const width = String(count).length + 1;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      if (signal?.aborted) throw signal.reason;
      const i = next++;
      const name = `f${String(i).padStart(width, '0')}.txt`;
      await fs.writeFile(path.join(dir, name), `file ${i}\n`);
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
}

/**
 * A file of `size` bytes of incompressible data (a 4 MiB random block, each copy stamped with
 * its index so no two blocks are equal). Written once per run.
 */
export async function createBigFile(file: string, size: number, signal?: AbortSignal): Promise<void> {
  const block = randomBytes(4 * 1024 * 1024);
  const fh = await fs.open(file, 'w');
  try {
    let pos = 0;
    for (let i = 0; pos < size; i++) {
      if (signal?.aborted) throw signal.reason;
      block.writeUInt32BE(i, 0);
      const n = Math.min(block.length, size - pos);
      await fh.write(block, 0, n, pos);
      pos += n;
    }
  } finally {
    await fh.close();
  }
}

/** Reads the file once so every server starts from the page cache. */
export async function warmPageCache(file: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const s = createReadStream(file, { highWaterMark: 1024 * 1024 });
    s.on('data', () => undefined);
    s.on('end', resolve);
    s.on('error', reject);
  });
}

export async function readSlice(file: string, start: number, length: number): Promise<Buffer> {
  const fh = await fs.open(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    await fh.read(buf, 0, length, start);
    return buf;
  } finally {
    await fh.close();
  }
}

/**
 * The baseline of the cold listing (the target's "raw readdir + stat in Node"): `fs.promises`
 * readdir of the folder, then `stat` of every entry, 256 at a time. Of the asynchronous
 * variants this was the fastest on a 2-core VM (all stats at once: ~1.5× slower; a pool of 16:
 * ~1.25× slower), so the baseline is not a strawman. Asynchronous because a server cannot
 * block its event loop.
 */
export async function rawList(dir: string): Promise<number> {
  const names = await fs.readdir(dir);
  let count = 0;
  for (let i = 0; i < names.length; i += 256) {
    const stats = await Promise.all(names.slice(i, i + 256).map((n) => fs.stat(path.join(dir, n))));
    count += stats.length;
  }
  return count;
}

/**
 * For reference only: the same with `readdirSync` + `statSync` (no thread-pool round trips,
 * typically 4-5× faster than any asynchronous variant, but it blocks the event loop).
 */
export function rawListSync(dir: string): number {
  const names = readdirSync(dir);
  for (const n of names) statSync(path.join(dir, n));
  return names.length;
}

/** sha256 (hex) of `length` bytes of `file` from `start`. */
export async function sha256Of(file: string, start: number, length: number): Promise<string> {
  const { createHash } = await import('node:crypto');
  return createHash('sha256').update(await readSlice(file, start, length)).digest('hex');
}

/**
 * Size of `file` and sha256 of its first and last `slice` bytes: a cheap identity check of a
 * copy of a big file (the bytes read come from the page cache).
 */
export async function headTailDigest(file: string, slice = 1024 * 1024): Promise<{ size: number; head: string; tail: string }> {
  const { size } = await fs.stat(file);
  const n = Math.min(slice, size);
  return { size, head: await sha256Of(file, 0, n), tail: await sha256Of(file, size - n, n) };
}

/** Number of entries of `dir` (0 when it does not exist). */
export async function countEntries(dir: string): Promise<number> {
  try {
    return (await fs.readdir(dir)).length;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
}
