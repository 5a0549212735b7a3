import { constants, copyFile as copyFileCb, copyFileSync, type Stats, stat as statCb, statSync, utimes as utimesCb, utimesSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { SyncSlices } from '../../util/sync-slices.js';

/** Files copied at once: enough to keep libuv's thread pool busy while the event loop walks. */
const COPY_CONCURRENCY = 16;

/**
 * Small files are copied with synchronous calls in slices (util/sync-slices.ts): stat, copy and
 * time stamps of a cached small file take a few microseconds each, while three round trips
 * through the thread pool per file cost more than the copying (a 1 000-file folder took 2× `cp -r`).
 * Files over SYNC_COPY_MAX_BYTES, and every file once a slice ran over its budget (a cold disk, a
 * network file system), go through the thread pool.
 */
const SYNC_COPY_MAX_BYTES = 256 * 1024;
const SYNC_FIRST_SLICE = 32;
const SYNC_MAX_SLICE = 512;
const SYNC_SLICE_MS = 10;

/**
 * Copies a file or folder tree to `to`, which must not exist. Small files are copied in
 * synchronous slices, bigger ones several at a time by the thread pool (the kernel does the byte
 * copying: copy_file_range/sendfile either way), symlinks are recreated verbatim,
 * modes and modification times are kept. fs.cp copies one file at a time with several stat
 * round trips each, which made a 10 000-file folder 27× slower than `cp -r`.
 */
export async function copyTree(from: string, to: string): Promise<void> {
  const pending = new Set<Promise<void>>();
  let failure: unknown;
  const dirTimes: Array<[string, Date, Date]> = [];

  const schedule = async (job: () => Promise<void>): Promise<void> => {
    while (pending.size >= COPY_CONCURRENCY) await Promise.race(pending);
    if (failure) throw failure;
    const p: Promise<void> = job()
      .catch((err) => {
        failure ??= err;
      })
      .finally(() => pending.delete(p));
    pending.add(p);
  };

  // The callback API: per call it costs a fraction of fs/promises, which shows over 10 000 files.
  // `known`: the source's stat when it was taken before the copy (the synchronous path's).
  const copyFile = (src: string, dst: string, known?: Stats): Promise<void> =>
    new Promise((resolve, reject) => {
      copyFileCb(src, dst, constants.COPYFILE_EXCL, (err) => {
        if (err) return reject(err);
        const stamp = (st: Stats) => utimesCb(dst, st.atime, st.mtime, (err3) => (err3 ? reject(err3) : resolve()));
        if (known) return stamp(known);
        statCb(src, (err2, st) => (err2 ? reject(err2) : stamp(st)));
      });
    });

  const slices = new SyncSlices(SYNC_FIRST_SLICE, SYNC_MAX_SLICE, SYNC_SLICE_MS);
  /** One file of a folder: synchronously when small (and the slices allow), else by the thread pool. */
  const copyOne = async (src: string, dst: string): Promise<void> => {
    if (!slices.sync) return schedule(() => copyFile(src, dst));
    const big = slices.run(() => {
      const st = statSync(src);
      if (st.size > SYNC_COPY_MAX_BYTES) return st;
      copyFileSync(src, dst, constants.COPYFILE_EXCL);
      utimesSync(dst, st.atime, st.mtime);
      return undefined;
    });
    if (big) await schedule(() => copyFile(src, dst, big));
    if (slices.full) await slices.pause();
  };

  const walk = async (src: string, dst: string): Promise<void> => {
    const st = await fs.lstat(src);
    if (st.isSymbolicLink()) {
      await fs.symlink(await fs.readlink(src), dst);
      return;
    }
    if (!st.isDirectory()) {
      await schedule(() => copyFile(src, dst));
      return;
    }
    await fs.mkdir(dst, { mode: st.mode & 0o7777 });
    dirTimes.push([dst, st.atime, st.mtime]);
    const entries = await fs.readdir(src, { withFileTypes: true });
    for (const e of entries) {
      if (failure) throw failure;
      const s = path.join(src, e.name);
      const d = path.join(dst, e.name);
      if (e.isFile()) await copyOne(s, d);
      else await walk(s, d);
    }
  };

  try {
    await walk(from, to);
  } finally {
    await Promise.all(pending);
  }
  if (failure) throw failure;
  // Folder times last: creating their children changed them.
  for (let i = dirTimes.length - 1; i >= 0; i--) {
    const [dir, atime, mtime] = dirTimes[i]!;
    await fs.utimes(dir, atime, mtime);
  }
}
